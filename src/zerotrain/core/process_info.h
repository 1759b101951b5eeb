// Facts about processes on this machine that files written by one run record for the next: the
// host name and whether a process ID still runs. Used by the swap directories' stale check
// (io/swap_directory.h), the --out lock (train/out_lock.h) and the monitors' file names. Tested by
// tests/core/test_process_info.cpp.
#pragma once

#include <string>

namespace zt {

// gethostname(), or "localhost" when it fails or is empty.
std::string host_name();

// Whether process `pid` of this host exists (a zombie counts: it has not been reaped yet).
// False for pid <= 0.
bool process_exists(long pid);

}  // namespace zt
