// The entry point of a distributed run: reads the launcher's variables, sets up MPI when the job
// has an MPI world, and hands out communicators. Tested by tests/comm/test_self_communicator.cpp
// (one process) and tests/mpi/ (under mpirun).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "zerotrain/comm/communicator.h"
#include "zerotrain/comm/process_env.h"
#include "zerotrain/core/device.h"

namespace zt::comm {

class MpiRuntime;
class OmpiNameServer;

struct ProcessGroupOptions {
  // Collective timeout; unset: ZEROTRAIN_COMM_TIMEOUT or 600 s.
  std::optional<double> timeout_s;
  // The launcher variables; unset: this process's environment.
  std::optional<EnvMap> env;
};

// [Note: which world]
// - mpirun / srun: MPI is initialized and host() is an MPI communicator over all ranks.
// - one process (no launcher, or a launcher with world size 1): host() is a SelfCommunicator;
//   MPI is not touched.
// - torchrun-style with world size > 1 (`zerotrain launch` without --mpi, torchrun, by hand on
//   several hosts): MPI is not touched at start; device communicators are bootstrapped through the
//   TCP rendezvous on MASTER_ADDR:MASTER_PORT. The first call of host() (collective) joins the
//   ranks into one MPI world through OpenMPI's name server ([Note: joining torchrun-style ranks]
//   in mpi_join.h), so CPU collectives work there too.
class ProcessGroup {
 public:
  explicit ProcessGroup(const ProcessGroupOptions& options = {});
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  const ProcessEnv& env() const { return env_; }
  int rank() const { return env_.rank; }
  int world_size() const { return env_.world_size; }
  int local_rank() const { return env_.local_rank; }
  double timeout_seconds() const { return timeout_s_; }

  bool has_host_communicator() const { return host_ != nullptr; }
  // The communicator for host buffers over every rank (see [Note: which world]). Collective the
  // first time under a torchrun-style launch (it joins the ranks into one MPI world).
  Communicator& host();

  // cuda:(local_rank mod visible devices); throws DeviceError without CUDA.
  Device local_device() const;
  // Collective over all ranks: an NCCL communicator on `device` (default local_device()),
  // bootstrapped through host() or the TCP rendezvous. Throws DeviceError in a CPU-only build.
  std::unique_ptr<Communicator> make_device_communicator(std::optional<Device> device = {});

  // Collective: rank 0's bytes on every rank, through host() or else the TCP rendezvous.
  std::vector<uint8_t> broadcast_bytes(const std::vector<uint8_t>& root_bytes);

 private:
  ProcessEnv env_;
  double timeout_s_;
  std::unique_ptr<OmpiNameServer> name_server_;  // rank 0 of a torchrun-style MPI world; after mpi_
  std::unique_ptr<MpiRuntime> mpi_;
  std::unique_ptr<Communicator> host_;
};

// What the trainer calls once at start-up.
std::unique_ptr<ProcessGroup> init_process_group(const ProcessGroupOptions& options = {});

}  // namespace zt::comm
