// `zerotrain launch -n N [--mpi] -- COMMAND ...`: starts N local ranks with torchrun-style
// variables (or under mpirun with --mpi), prefixes their output with "[rank N] " and stops them all
// when one fails. See docs/LAUNCH.md. Tested by tests/comm/test_launcher.cpp (the engine) and the
// launch_* ctest cases in tests/CMakeLists.txt (the command).
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "zerotrain/cli/commands.h"
#include "zerotrain/comm/launcher.h"
#include "zerotrain/comm/process_env.h"
#include "zerotrain/comm/tcp_rendezvous.h"
#include "zerotrain/core/error.h"

namespace zt::cli {
namespace {

struct LaunchArgs {
  int nproc = 1;
  bool mpi = false;
  bool rank_wrapper = false;  // internal: one rank under mpirun (see --mpi)
  int port = 0;
  double grace_s = 5.0;
  double stop_grace_s = 300.0;  // after SIGINT/SIGTERM to the launcher (comm/launcher.h)
  std::vector<std::string> command;
};

std::string self_exe() {
  std::vector<char> buf(4096);
  ssize_t n = ::readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  if (n <= 0) throw BackendError("launch", "cannot find the zerotrain executable (/proc/self/exe)");
  return std::string(buf.data(), static_cast<size_t>(n));
}

// `failed`: the rank that failed; `all`: what was stopped when the launcher itself was signalled.
int report(const comm::LaunchOutcome& o, const std::string& failed, const std::string& all) {
  if (o.exit_code == 0) return 0;
  if (o.failed_child < 0)
    std::fprintf(stderr, "[launch] %s; stopped %s\n", o.reason.c_str(), all.c_str());
  else
    std::fprintf(stderr, "[launch] %s failed: %s; stopped the other ranks\n", failed.c_str(),
                 o.reason.c_str());
  return o.exit_code;
}

// --mpi: mpirun starts the ranks (so they share an MPI world); each one runs this binary as a
// rank wrapper that prefixes the real command's output. mpirun stops the job when a rank fails.
int run_under_mpirun(const LaunchArgs& a) {
  comm::LaunchConfig cfg;
  const std::string stop_grace = std::to_string(static_cast<long long>(std::ceil(a.stop_grace_s)));
  cfg.command = {"mpirun", "-n", std::to_string(a.nproc), "--oversubscribe", "--bind-to", "none"};
  if (::geteuid() == 0) cfg.command.push_back("--allow-run-as-root");
  for (const std::string& s : {self_exe(), std::string("launch"), std::string("--rank-wrapper"),
                               std::string("-n"), std::to_string(a.nproc),
                               std::string("--stop-grace"), stop_grace, std::string("--")})
    cfg.command.push_back(s);
  cfg.command.insert(cfg.command.end(), a.command.begin(), a.command.end());
  cfg.children = {comm::ChildSpec{}};
  cfg.grace_s = a.grace_s;
  cfg.stop_grace_s = a.stop_grace_s;
  cfg.forward_stop_as = SIGUSR2;  // mpirun passes it to the rank wrappers at once
  comm::LaunchOutcome o = comm::run_children(cfg);
  if (o.exit_code != 0)
    std::fprintf(stderr, "[launch] mpirun %s (the failed rank says why above)\n", o.reason.c_str());
  return o.exit_code;
}

int run_rank_wrapper(const LaunchArgs& a) {
  comm::ProcessEnv env = comm::detect_process_env();
  std::string label = str("rank ", env.rank);
  comm::LaunchConfig cfg;
  cfg.command = a.command;
  cfg.children = {comm::ChildSpec{label, {}}};
  cfg.grace_s = a.grace_s;
  cfg.stop_grace_s = a.stop_grace_s;
  cfg.second_signal_kills = false;  // mpirun forwards what its process group already got
  return report(comm::run_children(cfg), label, label);
}

int run_local(const LaunchArgs& a) {
  int port = a.port ? a.port : comm::find_free_port();
  comm::LaunchConfig cfg;
  cfg.command = a.command;
  cfg.grace_s = a.grace_s;
  cfg.stop_grace_s = a.stop_grace_s;
  for (int r = 0; r < a.nproc; ++r)
    cfg.children.push_back({str("rank ", r), comm::local_rank_env(r, a.nproc, port)});
  comm::LaunchOutcome o = comm::run_children(cfg);
  return report(o, str("rank ", o.failed_child), "every rank");
}

}  // namespace

void add_launch_command(CLI::App& app, std::function<int()>& action) {
  auto* cmd = app.add_subcommand(
      "launch", "Start N local ranks of a command, prefix their output, stop all when one fails");
  auto a = std::make_shared<LaunchArgs>();
  cmd->add_option("-n,--nproc", a->nproc, "number of ranks to start")
      ->required()
      ->check(CLI::Range(1, 4096));
  cmd->add_flag("--mpi", a->mpi,
                "start the ranks with mpirun, so they share an MPI world from the start; "
                "otherwise torchrun-style variables only (CPU ranks then join one MPI world "
                "through rank 0's ompi-server)");
  cmd->add_option("--port", a->port, "MASTER_PORT for the ranks (default: a free port)")
      ->check(CLI::Range(1, 65535));
  cmd->add_option("--grace", a->grace_s, "seconds between SIGTERM and SIGKILL when stopping ranks")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--stop-grace", a->stop_grace_s,
                  "seconds the ranks get to stop cleanly (save a checkpoint) after SIGINT/SIGTERM "
                  "to the launcher, before SIGKILL; a second signal kills them at once")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_flag("--rank-wrapper", a->rank_wrapper)->group("");  // internal, used by --mpi
  cmd->add_option("command", a->command, "the command every rank runs (after --)")->required();
  cmd->footer(
      "Each rank gets RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR=127.0.0.1 and\n"
      "MASTER_PORT. The exit code is that of the first rank that failed (128 + signal when\n"
      "killed). Multi-node runs use mpirun or srun directly: see docs/LAUNCH.md.\n\n"
      "Examples:\n"
      "  zerotrain launch -n 4 -- zerotrain train --model m --data d.bin --deepspeed ds.json\n"
      "  zerotrain launch -n 2 --mpi -- zerotrain train ...      (CPU ranks in one MPI world)\n"
      "  zerotrain launch -n 2 -- sh -c 'echo rank $RANK of $WORLD_SIZE'");
  cmd->callback([&action, a] {
    action = [a] {
      if (a->rank_wrapper) return run_rank_wrapper(*a);
      return a->mpi ? run_under_mpirun(*a) : run_local(*a);
    };
  });
}

}  // namespace zt::cli
