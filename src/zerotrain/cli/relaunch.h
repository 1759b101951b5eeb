// `zerotrain train --nproc N` (or --accelerate-config FILE with num_processes N): a single process
// re-runs its own command line under `zerotrain launch -n N` (`--config-file FILE`; --mpi for CPU
// ranks), which starts the N ranks; under a launcher the flag only checks that the launcher
// started N. Tested by the CLI ctests of
// tests/cli/hostile_inputs.cmake and launch_dies_whole (tests/CMakeLists.txt).
#pragma once

#include <string>
#include <vector>

namespace zt::cli {

// How many ranks a train command asks for, and the Accelerate config that says so (or "").
struct RankRequest {
  int nproc = 1;
  std::string accelerate_config;
};

// args: the command line after the program name. world_size: the ranks the launcher started (1
// without one). cpu: the run is on the CPU; stop_grace_s: the ranks' --stop-grace, which the
// launcher waits a little longer than before SIGKILL. Does nothing for nproc 1; replaces this
// process when there is no launcher yet; throws ValueError when the launcher started another
// number of ranks, or BackendError when the re-run cannot start.
void run_nproc_ranks(const std::vector<std::string>& args, const RankRequest& ranks, int world_size,
                     bool cpu, double stop_grace_s);

}  // namespace zt::cli
