// The process group of the multi-rank test binary (comm_mpi_tests), created once in mpi_main.cpp.
#pragma once

#include "zerotrain/comm/process_group.h"

namespace zt::test {

comm::ProcessGroup& process_group();

}  // namespace zt::test
