// Process setup. See [Note: which world] in process_group.h.
#include "zerotrain/comm/process_group.h"

#include "zerotrain/comm/mpi_communicator.h"
#include "zerotrain/comm/mpi_join.h"
#include "zerotrain/comm/self_communicator.h"
#include "zerotrain/comm/tcp_rendezvous.h"
#include "zerotrain/core/error.h"

namespace zt::comm {

ProcessGroup::ProcessGroup(const ProcessGroupOptions& options) {
  EnvMap env = options.env ? *options.env : current_env();
  env_ = detect_process_env(env);
  timeout_s_ = options.timeout_s ? *options.timeout_s : comm_timeout_seconds(env);
  if (!(timeout_s_ > 0)) throw ValueError("comm", str("timeout must be > 0 s, got ", timeout_s_));
  const bool mpi_world = env_.source == LaunchSource::openmpi || env_.source == LaunchSource::slurm;
  if (mpi_world && env_.world_size > 1) {
    mpi_ = std::make_unique<MpiRuntime>();
    if (mpi_->world_size() != env_.world_size || mpi_->world_rank() != env_.rank)
      throw ValueError(
          "comm", str("MPI world (rank ", mpi_->world_rank(), " of ", mpi_->world_size(),
                      ") disagrees with the ", launch_source_name(env_.source), " variables (rank ",
                      env_.rank, " of ", env_.world_size, ")"));
    host_ = make_mpi_world_communicator(timeout_s_);
  } else if (env_.world_size == 1) {
    host_ = std::make_unique<SelfCommunicator>(timeout_s_);
  }
}

ProcessGroup::~ProcessGroup() {
  host_.reset();  // communicators go before MPI_Finalize
}

Communicator& ProcessGroup::host() {
  if (!host_ && env_.source == LaunchSource::torchrun && env_.world_size > 1) {
    JoinedWorld world = join_torchrun_style_ranks(env_, timeout_s_);
    name_server_ = std::move(world.name_server);
    mpi_ = std::move(world.mpi);
    host_ = std::move(world.communicator);
  }
  if (!host_)
    throw DeviceError("comm", str("CPU collectives need an MPI world: run under mpirun or "
                                  "`zerotrain launch --mpi` (this is rank ",
                                  env_.rank, " of ", env_.world_size, ", started ",
                                  launch_source_name(env_.source), "-style)"));
  return *host_;
}

Device ProcessGroup::local_device() const {
  int n = cuda_device_count();
  if (n == 0) throw DeviceError("comm", "no CUDA device visible for this rank");
  return Device::cuda(env_.local_rank % n);
}

std::vector<uint8_t> ProcessGroup::broadcast_bytes(const std::vector<uint8_t>& root_bytes) {
  if (host_) {
    uint64_t n = root_bytes.size();
    host_->broadcast(&n, 1, DType::i64, 0, Stream::host());
    std::vector<uint8_t> out = env_.rank == 0 ? root_bytes : std::vector<uint8_t>(n);
    host_->broadcast(out.data(), out.size(), DType::u8, 0, Stream::host());
    return out;
  }
  if (env_.master_addr.empty() || env_.master_port == 0)
    throw ValueError("comm", str("rank ", env_.rank, " of ", env_.world_size,
                                 " has no MPI world and no MASTER_ADDR/MASTER_PORT to meet at"));
  return tcp_broadcast(env_.master_addr, env_.master_port, env_.rank, env_.world_size, root_bytes,
                       timeout_s_);
}

std::unique_ptr<ProcessGroup> init_process_group(const ProcessGroupOptions& options) {
  return std::make_unique<ProcessGroup>(options);
}

}  // namespace zt::comm
