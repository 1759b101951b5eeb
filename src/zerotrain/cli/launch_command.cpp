// `zerotrain launch -n N [--mpi] -- COMMAND ...`: starts N local ranks with torchrun-style
// variables (or under mpirun with --mpi), prefixes their output with "[rank N] " and stops them all
// when one fails. See docs/LAUNCH.md. Tested by tests/comm/test_launcher.cpp (the engine) and the
// launch_* ctest cases in tests/CMakeLists.txt (the command).
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zerotrain/cli/accelerate_launch.h"
#include "zerotrain/cli/commands.h"
#include "zerotrain/comm/launcher.h"
#include "zerotrain/comm/process_env.h"
#include "zerotrain/comm/tcp_rendezvous.h"
#include "zerotrain/core/error.h"

namespace zt::cli {
namespace {

struct LaunchArgs {
  int nproc = 0;            // -n; 0: from --config-file
  std::string config_file;  // --config-file: an Accelerate config
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
int run_under_mpirun(const LaunchArgs& a,
                     const std::optional<config::AccelerateConfig>& accelerate) {
  comm::LaunchConfig cfg;
  const std::string stop_grace = std::to_string(static_cast<long long>(std::ceil(a.stop_grace_s)));
  // -q: the failed rank says why in one line; mpirun's own banners would repeat it at length.
  cfg.command = {"mpirun",          "-q",        "-n",  std::to_string(a.nproc),
                 "--oversubscribe", "--bind-to", "none"};
  if (::geteuid() == 0) cfg.command.push_back("--allow-run-as-root");
  for (const std::string& s : {self_exe(), std::string("launch"), std::string("--rank-wrapper"),
                               std::string("-n"), std::to_string(a.nproc),
                               std::string("--stop-grace"), stop_grace, std::string("--")})
    cfg.command.push_back(s);
  cfg.command.insert(cfg.command.end(), a.command.begin(), a.command.end());
  cfg.children = {comm::ChildSpec{}};
  // mpirun's local ranks inherit its environment: the config file and the GPUs to use.
  if (accelerate) {
    const comm::EnvMap rank_env =
        accelerate_children(*accelerate, a.config_file, 0).front().extra_env;
    for (const char* k : {kAccelerateConfigEnv, "CUDA_VISIBLE_DEVICES"})
      if (rank_env.contains(k)) cfg.children[0].extra_env[k] = rank_env.at(k);
  }
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
  const comm::LaunchOutcome o = comm::run_children(cfg);
  // A rank that exited non-zero said why itself; the launcher above says that mpirun failed.
  if (o.exit_code != 0 && o.exit_code < 128 && o.failed_child >= 0) return o.exit_code;
  return report(o, label, label);
}

// MASTER_PORT: --port, else the config's main_process_port, else a free one.
int launch_port(const LaunchArgs& a, const std::optional<config::AccelerateConfig>& accelerate) {
  const std::optional<int64_t> file_port =
      accelerate ? accelerate->ranks.main_process_port : std::nullopt;
  if (a.port && file_port && *file_port != a.port)
    throw ValueError("launch", str("--port ", a.port, " but ", a.config_file,
                                   " has main_process_port ", *file_port, "; make them agree"));
  if (a.port) return a.port;
  return file_port ? static_cast<int>(*file_port) : comm::find_free_port();
}

int run_local(const LaunchArgs& a, const std::optional<config::AccelerateConfig>& accelerate) {
  const int port = launch_port(a, accelerate);
  comm::LaunchConfig cfg;
  cfg.command = a.command;
  cfg.grace_s = a.grace_s;
  cfg.stop_grace_s = a.stop_grace_s;
  if (accelerate)
    cfg.children = accelerate_children(*accelerate, a.config_file, port);
  else
    for (int r = 0; r < a.nproc; ++r)
      cfg.children.push_back({str("rank ", r), comm::local_rank_env(r, a.nproc, port)});
  comm::LaunchOutcome o = comm::run_children(cfg);
  return report(o, o.failed_child >= 0 ? cfg.children[o.failed_child].label : "", "every rank");
}

// --config-file's settings, checked against --mpi; none without the flag.
std::optional<config::AccelerateConfig> read_launch_config(LaunchArgs& a) {
  if (a.config_file.empty()) return std::nullopt;
  config::AccelerateConfig c = config::read_accelerate_config(a.config_file);
  if (a.mpi && c.ranks.num_machines > 1)
    throw ValueError("launch",
                     str("--mpi with ", a.config_file, "'s num_machines ", c.ranks.num_machines,
                         ": mpirun starts one machine's ranks "
                         "here (use mpirun's own host list, or leave out --mpi)"));
  a.nproc = static_cast<int>(c.ranks.processes_per_machine());
  return c;
}

}  // namespace

void add_launch_command(CLI::App& app, std::function<int()>& action) {
  auto* cmd = app.add_subcommand(
      "launch", "Start N local ranks of a command, prefix their output, stop all when one fails");
  auto a = std::make_shared<LaunchArgs>();
  cmd->add_option("-n,--nproc", a->nproc, "number of ranks to start (or --config-file)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--config-file", a->config_file,
                  "an Accelerate config file (`accelerate launch --config_file`): the ranks from "
                  "num_processes, num_machines, machine_rank, main_process_ip and "
                  "main_process_port, the GPUs from gpu_ids; each rank gets the file in " +
                      std::string(kAccelerateConfigEnv) +
                      ", which `zerotrain train` reads as --accelerate-config")
      ->check(CLI::ExistingFile);
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
      "killed). Multi-node runs use mpirun or srun directly, or --config-file on each machine\n"
      "(its machine_rank): see docs/LAUNCH.md.\n\n"
      "Examples:\n"
      "  zerotrain launch -n 4 -- zerotrain train --model m --data d.bin --deepspeed ds.json\n"
      "  zerotrain launch -n 2 --mpi -- zerotrain train ...      (CPU ranks in one MPI world)\n"
      "  zerotrain launch --config-file default_config.yaml -- zerotrain train --model m "
      "--data d.bin --out runs/a\n"
      "  zerotrain launch -n 2 -- sh -c 'echo rank $RANK of $WORLD_SIZE'");
  cmd->callback([&action, a] {
    if (a->config_file.empty() && a->nproc < 1)
      throw CLI::RequiredError("-n N (the ranks to start) or --config-file FILE");
    if (!a->config_file.empty() && a->nproc > 0)
      throw CLI::ValidationError("-n", str(a->nproc,
                                           " and --config-file: give one (the file's "
                                           "num_processes says how many ranks)"));
    action = [a] {
      if (a->rank_wrapper) return run_rank_wrapper(*a);
      const std::optional<config::AccelerateConfig> accelerate = read_launch_config(*a);
      return a->mpi ? run_under_mpirun(*a, accelerate) : run_local(*a, accelerate);
    };
  });
}

}  // namespace zt::cli
