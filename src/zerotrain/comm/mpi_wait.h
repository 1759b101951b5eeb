// Waiting for MPI requests with a deadline, and the checked-call macro for MPI. Internal to the
// MPI backend. Tested (timeout path) by tests/mpi/ through tests/mpi/expect_failure.cmake.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

namespace zt::comm::detail {

[[noreturn]] void throw_mpi_error(int code, const char* call, const char* file, int line);

#define ZT_MPI_CHECK(call)                                                        \
  do {                                                                            \
    int zt_mpi_rc_ = (call);                                                      \
    if (zt_mpi_rc_ != MPI_SUCCESS)                                                \
      ::zt::comm::detail::throw_mpi_error(zt_mpi_rc_, #call, __FILE__, __LINE__); \
  } while (0)

// A batch of pending requests of one collective; peer[i] is the world rank request i talks to
// (-1 when it involves every rank, e.g. MPI_Ibarrier).
struct PendingRequests {
  std::vector<MPI_Request> requests;
  std::vector<int> peers;
  void add(MPI_Request r, int peer) {
    requests.push_back(r);
    peers.push_back(peer);
  }
};

// What a collective is, for the timeout message: "all_reduce of 4096 f32 on ranks 0-3".
struct CollectiveInfo {
  std::string description;
  int world_rank = 0;
  double timeout_s = 0;
  // The host of each world rank (mpi_host_names.h); null or one host: the message names no hosts.
  const std::vector<std::string>* world_hosts = nullptr;
};

// [Note: collective timeout]
// Every MPI collective posts nonblocking requests and polls them against a deadline of the
// communicator's timeout (ZEROTRAIN_COMM_TIMEOUT or the constructor option). When the deadline
// passes, this prints one line to stderr, e.g.
//   [comm] all_reduce of 4096 f32 on ranks 0-3 did not complete in 30 s (rank 2 still waits for
//   rank 1: a peer died, hangs, is cut off, or skipped the call); aborting
// The ranks named are those whose point-to-point transfers with this rank are still outstanding
// (a barrier or split waits on every rank: "the other ranks"). When the job spans several hosts,
// each rank is named with its host ("rank 0 on node-a still waits for rank 1 on node-b"), from
// the names gathered once when the world communicator is made. Then it calls MPI_Abort, which ends every rank of the job with a non-zero exit. Throwing instead
// would leave the peers blocked in the same collective: a dead peer must never mean a silent hang.
void wait_all(PendingRequests& pending, const CollectiveInfo& info);

}  // namespace zt::comm::detail
