// Torchrun-style ranks joined into one MPI world. See [Note: joining torchrun-style ranks] in
// mpi_join.h.
#include "zerotrain/comm/mpi_join.h"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "zerotrain/comm/mpi_wait.h"
#include "zerotrain/comm/tcp_rendezvous.h"
#include "zerotrain/core/error.h"

namespace zt::comm {
namespace {

using clock = std::chrono::steady_clock;

// Ends the process with one line when `done()` is not called by the deadline: MPI's
// connect/accept/lookup cannot be interrupted.
class JoinWatchdog {
 public:
  JoinWatchdog(const ProcessEnv& env, double timeout_s) {
    thread_ = std::thread([this, env, timeout_s] {
      std::unique_lock<std::mutex> lock(mutex_);
      const auto deadline = clock::now() + std::chrono::duration_cast<clock::duration>(
                                               std::chrono::duration<double>(timeout_s));
      if (cv_.wait_until(lock, deadline, [this] { return done_; })) return;
      std::fprintf(stderr,
                   "[comm] rank %d of %d (started torchrun-style, meeting at %s:%d) did not join "
                   "one MPI world with the other ranks in %g s (%s); aborting\n",
                   env.rank, env.world_size, env.master_addr.c_str(), env.master_port, timeout_s,
                   stage_.c_str());
      std::fflush(stderr);
      std::_Exit(1);
    });
  }
  ~JoinWatchdog() { done(); }
  JoinWatchdog(const JoinWatchdog&) = delete;
  JoinWatchdog& operator=(const JoinWatchdog&) = delete;

  void stage(std::string what) {
    std::lock_guard<std::mutex> lock(mutex_);
    stage_ = std::move(what);
  }
  void done() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::string stage_ = "starting";
  std::thread thread_;
};

std::string bytes_to_string(const std::vector<uint8_t>& b) { return {b.begin(), b.end()}; }

int comm_size(MPI_Comm c) {
  int n = 0;
  ZT_MPI_CHECK(MPI_Comm_size(c, &n));
  return n;
}

// Accepts one newcomer into `group` (collective over it) and returns the merged communicator;
// frees `group`.
MPI_Comm accept_one(MPI_Comm group, const char* port) {
  MPI_Comm inter = MPI_COMM_NULL, merged = MPI_COMM_NULL;
  ZT_MPI_CHECK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, group, &inter));
  ZT_MPI_CHECK(MPI_Intercomm_merge(inter, 0, &merged));
  ZT_MPI_CHECK(MPI_Comm_free(&inter));
  ZT_MPI_CHECK(MPI_Comm_free(&group));
  return merged;
}

}  // namespace

JoinedWorld join_torchrun_style_ranks(const ProcessEnv& env, double timeout_s) {
  if (env.world_size < 2 || env.master_addr.empty() || env.master_port == 0)
    throw ValueError("comm", str("rank ", env.rank, " of ", env.world_size,
                                 " has no MPI world and no MASTER_ADDR/MASTER_PORT to meet at"));
  JoinWatchdog watchdog(env, timeout_s);
  JoinedWorld world;
  watchdog.stage("exchanging the name server's address through the TCP rendezvous");
  if (env.rank == 0) world.name_server = std::make_unique<OmpiNameServer>(timeout_s);
  const std::string uri = bytes_to_string(tcp_broadcast(
      env.master_addr, env.master_port, env.rank, env.world_size,
      env.rank == 0 ? std::vector<uint8_t>(world.name_server->uri().begin(),
                                           world.name_server->uri().end())
                    : std::vector<uint8_t>{},
      timeout_s));
  ::setenv("OMPI_MCA_pmix_server_uri", uri.c_str(), 1);
  watchdog.stage("initializing MPI");
  world.mpi = std::make_unique<MpiRuntime>();
  ZT_MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  const std::string service = str("zerotrain@", env.master_addr, ":", env.master_port);
  // The name under which rank 0 announces that the rank `joined` may connect now.
  const auto turn = [&service](int joined) { return str(service, "#", joined); };
  char port[MPI_MAX_PORT_NAME] = {};
  MPI_Comm group = MPI_COMM_NULL;
  if (env.rank == 0) {
    ZT_MPI_CHECK(MPI_Open_port(MPI_INFO_NULL, port));
    ZT_MPI_CHECK(MPI_Comm_dup(MPI_COMM_SELF, &group));
  } else {
    watchdog.stage(str("waiting for rank 0 to admit rank ", env.rank, " (", turn(env.rank), ")"));
    while (MPI_Lookup_name(turn(env.rank).c_str(), MPI_INFO_NULL, port) != MPI_SUCCESS)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    watchdog.stage("connecting to rank 0's port");
    MPI_Comm inter = MPI_COMM_NULL;
    ZT_MPI_CHECK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter));
    ZT_MPI_CHECK(MPI_Intercomm_merge(inter, 1, &group));
    ZT_MPI_CHECK(MPI_Comm_free(&inter));
  }
  // One newcomer at a time, in RANK order: OpenMPI pairs concurrent connects to one port with
  // the accepts wrongly, and a rank could wait in MPI_Comm_connect for good.
  while (comm_size(group) < env.world_size) {
    const int joined = comm_size(group);
    watchdog.stage(str(joined, " of ", env.world_size, " ranks joined"));
    if (env.rank == 0) ZT_MPI_CHECK(MPI_Publish_name(turn(joined).c_str(), MPI_INFO_NULL, port));
    group = accept_one(group, port);
    if (env.rank == 0) ZT_MPI_CHECK(MPI_Unpublish_name(turn(joined).c_str(), MPI_INFO_NULL, port));
  }
  MPI_Comm ordered = MPI_COMM_NULL;
  ZT_MPI_CHECK(MPI_Comm_split(group, 0, env.rank, &ordered));
  ZT_MPI_CHECK(MPI_Comm_free(&group));
  if (env.rank == 0) ZT_MPI_CHECK(MPI_Close_port(port));
  int rank = -1;
  ZT_MPI_CHECK(MPI_Comm_rank(ordered, &rank));
  if (rank != env.rank)
    throw ValueError("comm", str("the joined MPI world gave rank ", rank, " to RANK=", env.rank,
                                 ": two ranks share one RANK"));
  watchdog.stage("exchanging host names");
  world.communicator = make_mpi_job_communicator(ordered, timeout_s);
  watchdog.done();
  return world;
}

}  // namespace zt::comm
