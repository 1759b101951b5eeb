// `--nproc N` through `zerotrain launch` (relaunch.h).
#include "zerotrain/cli/relaunch.h"

#include <unistd.h>

#include <cstdio>

#include "zerotrain/core/error.h"

namespace zt::cli {

namespace {

// Replaces this process with `zerotrain launch -n N [--mpi] -- zerotrain <args without --nproc>`
// (`--config-file FILE` instead of `-n N` for an Accelerate config: the launcher reads its ranks).
[[noreturn]] void relaunch(const std::vector<std::string>& args, const RankRequest& ranks, bool cpu,
                           double stop_grace_s) {
  char launcher_grace[32];
  std::snprintf(launcher_grace, sizeof launcher_grace, "%.0f", stop_grace_s + 30);
  std::vector<std::string> argv{"/proc/self/exe", "launch", "--stop-grace", launcher_grace};
  if (ranks.accelerate_config.empty()) {
    argv.push_back("-n");
    argv.push_back(std::to_string(ranks.nproc));
  } else {
    argv.push_back("--config-file");
    argv.push_back(ranks.accelerate_config);
  }
  if (cpu) argv.push_back("--mpi");  // CPU ranks reduce through MPI
  argv.push_back("--");
  argv.push_back("/proc/self/exe");
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--nproc") {
      ++i;
      continue;
    }
    if (args[i].rfind("--nproc=", 0) == 0) continue;
    argv.push_back(args[i]);
  }
  std::vector<char*> cargv;
  for (std::string& a : argv)
    cargv.push_back(a.data());
  cargv.push_back(nullptr);
  ::execv("/proc/self/exe", cargv.data());
  throw BackendError("train", str("cannot re-run under zerotrain launch: execv failed"));
}

}  // namespace

void run_nproc_ranks(const std::vector<std::string>& args, const RankRequest& ranks, int world_size,
                     bool cpu, double stop_grace_s) {
  const int nproc = ranks.nproc;
  if (nproc > 1 && world_size == 1) relaunch(args, ranks, cpu, stop_grace_s);
  if (nproc > 1 && world_size != nproc)
    throw ValueError("train",
                     str("--nproc ", nproc, " but the launcher started ", world_size, " ranks"));
}

}  // namespace zt::cli
