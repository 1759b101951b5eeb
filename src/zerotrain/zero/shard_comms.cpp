// The communicators of plain and hybrid sharding; see [Note: hybrid sharding] in shard_comms.h.
#include "zerotrain/zero/shard_comms.h"

#include "zerotrain/comm/hybrid_reduce.h"
#include "zerotrain/zero/zero_config.h"

namespace zt::zero {

ShardComms::ShardComms(comm::Communicator& world) : world_(&world) {}

ShardComms::ShardComms(comm::Communicator& world, const ZeroConfig& config) : world_(&world) {
  if (!hybrid_sharding(config, world.size())) return;
  const int rank = world.rank(), g = static_cast<int>(config.zero_hpz_partition_size);
  group_ = world.split(rank / g, rank);
  replicas_ = world.split(rank % g, rank);
}

void ShardComms::reduce_scatter(const void* send, void* recv, size_t recv_count, DType dtype,
                                comm::ReduceOp op, Stream stream) const {
  if (!hybrid()) {
    world_->reduce_scatter(send, recv, recv_count, dtype, op, stream);
    return;
  }
  comm::hybrid_reduce_scatter(*group_, *replicas_, send, recv, recv_count, dtype, op, stream);
}

}  // namespace zt::zero
