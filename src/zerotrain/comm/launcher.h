// Starts local ranks as child processes, forwards their output line by line with a "[rank N] "
// prefix, and when one fails stops the others (SIGTERM, then SIGKILL after a grace period). The
// engine of `zerotrain launch`. The children die with the launcher, even when it is killed with
// SIGKILL (a parent-death signal, SIGTERM). Tested by tests/comm/test_launcher.cpp and
// tests/cli/launcher_death.sh.
#pragma once

#include <csignal>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "zerotrain/comm/process_env.h"

namespace zt::comm {

// Set to 1 for every child whose lines the launcher prefixes (a non-empty label): the child need
// not name its rank itself ([Note: one line per error across ranks] in agreed_checks.h).
inline constexpr const char* kRankPrefixEnv = "ZEROTRAIN_RANK_PREFIXED";

struct ChildSpec {
  std::string label;  // prefix of its output lines ("rank 1" -> "[rank 1] ..."); empty: no prefix
  EnvMap extra_env;   // set on top of the launcher's environment
};

struct LaunchOutcome {
  int exit_code = 0;      // 0, or the first failed child's exit code (128 + signal if killed)
  int failed_child = -1;  // index into the specs of the first child that failed, -1 if none
  std::string reason;     // "exited with code 3", "killed by signal SIGSEGV"
};

// One output line of a child: the prefixed text (no newline) and whether it came from stderr.
using LineSink = std::function<void(const std::string& line, bool is_stderr)>;

struct LaunchConfig {
  std::vector<std::string> command;  // argv of every child (looked up in PATH)
  std::vector<ChildSpec> children;
  double grace_s = 5.0;  // SIGTERM -> SIGKILL delay when stopping the others after a failure
  // The same delay when the launcher itself got SIGINT/SIGTERM: the ranks' time to save a
  // checkpoint and exit ([Note: stop on a signal] in train/stop_signal.h); a second signal to the
  // launcher kills them at once.
  double stop_grace_s = 300.0;
  // false for a launcher whose signals come from two senders at once (the rank wrapper under
  // mpirun: mpirun forwards the signal its process group also got).
  bool second_signal_kills = true;
  // What the children get when the launcher is signalled: SIGTERM, or SIGUSR2 for mpirun, which
  // forwards SIGUSR2 to its ranks at once but holds SIGTERM back for odls_base_sigkill_timeout
  // and then kills them (SIGTERM follows when stop_grace_s is over, SIGKILL grace_s later).
  // The launcher treats SIGUSR2 like SIGTERM, so a rank wrapper under mpirun passes it on.
  int forward_stop_as = SIGTERM;
  LineSink sink;         // default: stdout / stderr of this process
};

// Runs the children to completion. A child failing (non-zero exit or a signal) makes the others
// stop; SIGINT / SIGTERM to the launcher forwards SIGTERM to every child (SIGKILL after
// stop_grace_s, or at a second signal). Throws ValueError for an empty command or
// no children, BackendError when a process cannot be started.
LaunchOutcome run_children(const LaunchConfig& config);

// Where one rank of a torchrun-style job sits: its global rank of `world`, its place among the
// `local_world` ranks of its machine, and rank 0's address.
struct RankPlace {
  int64_t rank = 0, world = 1;
  int64_t local_rank = 0, local_world = 1;
  std::string master_addr = "127.0.0.1";
  int port = 0;
};

// RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT of `p`.
EnvMap rank_env(const RankPlace& p);

// rank_env of local rank `rank` of `world`, all on this machine, meeting at 127.0.0.1:port.
EnvMap local_rank_env(int rank, int world, int port);

// "SIGTERM", "SIGSEGV", ... ("signal 42" for others).
std::string signal_name(int signo);

}  // namespace zt::comm
