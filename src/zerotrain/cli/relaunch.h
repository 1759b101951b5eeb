// `zerotrain train --nproc N`: a single process re-runs its own command line under
// `zerotrain launch -n N` (--mpi for CPU ranks), which starts the N ranks; under a launcher the
// flag only checks that the launcher started N. Tested by the CLI ctests of
// tests/cli/hostile_inputs.cmake and launch_dies_whole (tests/CMakeLists.txt).
#pragma once

#include <string>
#include <vector>

namespace zt::cli {

// args: the command line after the program name. world_size: the ranks the launcher started (1
// without one). cpu: the run is on the CPU; stop_grace_s: the ranks' --stop-grace, which the
// launcher waits a little longer than before SIGKILL. Does nothing for nproc 1; replaces this
// process when there is no launcher yet; throws ValueError when the launcher started another
// number of ranks, or BackendError when the re-run cannot start.
void run_nproc_ranks(const std::vector<std::string>& args, int nproc, int world_size, bool cpu,
                     double stop_grace_s);

}  // namespace zt::cli
