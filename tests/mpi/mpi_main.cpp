// main() of comm_mpi_tests, the multi-rank GoogleTest binary run by ctest under
// `mpirun -n 2|4 --oversubscribe` (see tests/CMakeLists.txt). Every rank runs every test and prints
// its own results; the exit code is non-zero on a rank
// whose tests failed, which makes mpirun fail.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>

#include "mpi/mpi_test_env.h"

namespace zt::test {
namespace {
std::unique_ptr<comm::ProcessGroup> g_group;
}

comm::ProcessGroup& process_group() {
  return *g_group;
}

}  // namespace zt::test

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // A broken test must fail fast rather than wait for the default 600 s.
  zt::test::g_group = zt::comm::init_process_group(zt::comm::ProcessGroupOptions{20.0, {}});
  int rc = RUN_ALL_TESTS();
  if (rc != 0)
    std::fprintf(stderr, "[rank %d] some tests failed (run with the failing filter for details)\n",
                 zt::test::g_group->rank());
  zt::test::g_group.reset();
  return rc;
}
