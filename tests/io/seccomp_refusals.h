// Seccomp filters a test installs in a forked child (io/child_process.h) to make the kernel refuse
// what some machines refuse: O_DIRECT (tmpfs before Linux 6.6) and io_uring (Docker's default
// profile). Used by tests/io/test_swap_file.cpp and test_direct_file_reader.cpp.
#pragma once

namespace zt::test {

// openat with O_DIRECT answered by EINVAL, as a filesystem without direct I/O answers it; false
// where installing a filter is not permitted.
bool refuse_o_direct();

// io_uring_setup answered by EPERM; false where installing a filter is not permitted.
bool refuse_io_uring();

}  // namespace zt::test
