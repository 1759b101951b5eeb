// Deadline-polled MPI waits. See [Note: collective timeout] in mpi_wait.h.
#include "zerotrain/comm/mpi_wait.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "zerotrain/comm/communicator.h"
#include "zerotrain/comm/peer_hosts.h"
#include "zerotrain/core/error.h"

namespace zt::comm::detail {

void throw_mpi_error(int code, const char* call, const char* file, int line) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  MPI_Error_string(code, text, &len);
  throw BackendError("comm", str(call, " failed: ", text, " (", file, ":", line, ")"));
}

namespace {

[[noreturn]] void abort_on_timeout(const PendingRequests& pending, const CollectiveInfo& info) {
  std::vector<int> waiting_for;
  bool collective_wait = false;
  for (size_t i = 0; i < pending.requests.size(); ++i) {
    if (pending.requests[i] == MPI_REQUEST_NULL) continue;
    if (pending.peers[i] < 0)
      collective_wait = true;
    else
      waiting_for.push_back(pending.peers[i]);
  }
  static const std::vector<std::string> no_hosts;
  const std::vector<std::string>& hosts = info.world_hosts ? *info.world_hosts : no_hosts;
  std::sort(waiting_for.begin(), waiting_for.end());
  waiting_for.erase(std::unique(waiting_for.begin(), waiting_for.end()), waiting_for.end());
  std::string who = collective_wait || waiting_for.empty()
                        ? std::string("the other ranks")
                        : describe_ranks_on_hosts(waiting_for, hosts);
  std::string me = str(info.world_rank, on_host_suffix(info.world_rank, hosts));
  std::fprintf(stderr,
               "[comm] %s did not complete in %g s (rank %s still waits for %s: a peer died, "
               "hangs, is cut off, or skipped the call); aborting\n",
               info.description.c_str(), info.timeout_s, me.c_str(), who.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::_Exit(1);  // MPI_Abort does not return; this keeps [[noreturn]] honest
}

}  // namespace

void wait_all(PendingRequests& pending, const CollectiveInfo& info) {
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + std::chrono::duration_cast<clock::duration>(
                                           std::chrono::duration<double>(info.timeout_s));
  auto& reqs = pending.requests;
  const int n = static_cast<int>(reqs.size());
  std::vector<int> done(reqs.size());
  for (long polls = 0;; ++polls) {
    int outcount = 0;
    ZT_MPI_CHECK(MPI_Testsome(n, reqs.data(), &outcount, done.data(), MPI_STATUSES_IGNORE));
    if (outcount == MPI_UNDEFINED) return;  // every request is complete (MPI_REQUEST_NULL)
    if ((polls & 63) == 63 && clock::now() > deadline) abort_on_timeout(pending, info);
    std::this_thread::yield();  // ranks may share cores (oversubscribed runs)
  }
}

}  // namespace zt::comm::detail
