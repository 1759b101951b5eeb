// Who this process is in a distributed job: rank, world size and local rank, read from the
// variables a launcher sets (mpirun, srun, torchrun / `zerotrain launch`). Tested by
// tests/comm/test_process_env.cpp with fake environment maps.
#pragma once

#include <map>
#include <string>

namespace zt::comm {

using EnvMap = std::map<std::string, std::string>;

// Which launcher the variables came from, in the order detect_process_env tries them.
enum class LaunchSource { openmpi, torchrun, slurm, single };

struct ProcessEnv {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  std::string master_addr;  // empty when the launcher did not set MASTER_ADDR
  int master_port = 0;      // 0 when the launcher did not set MASTER_PORT
  LaunchSource source = LaunchSource::single;
};

// OpenMPI (OMPI_COMM_WORLD_RANK/SIZE/LOCAL_RANK) first, then torchrun-style (RANK, WORLD_SIZE,
// LOCAL_RANK), then Slurm (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID); none of them: one process.
// MASTER_ADDR / MASTER_PORT are read for every source. A malformed or inconsistent value throws
// ValueError naming the variable and the value.
ProcessEnv detect_process_env(const EnvMap& env);
// The same over this process's environment.
ProcessEnv detect_process_env();
EnvMap current_env();

const char* launch_source_name(LaunchSource s);  // "openmpi", "torchrun", "slurm", "single"

// Collective timeout in seconds: ZEROTRAIN_COMM_TIMEOUT when set (a positive number), else 600.
double comm_timeout_seconds(const EnvMap& env);
double comm_timeout_seconds();

}  // namespace zt::comm
