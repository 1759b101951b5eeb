// The ranks a sharded ZeRO stage spreads each group's shards over: the whole world (plain ZeRO) or,
// with hybrid sharding, this rank's group of consecutive ranks, the shards replicated across the
// groups. Built once by the stage from ZeroConfig::zero_hpz_partition_size. Tested by
// tests/mpi/test_zero_hybrid.cpp (training parity with plain stage 3) and
// tests/mpi/test_hybrid_reduce.cpp (the reduction).
//
// [Note: hybrid sharding]
// FSDP's HSDP (zero_optimization.zero_hpz_partition_size = g, a divisor of the world size W
// between 1 and W; 1, W or more, as configs written for larger nodes give, is plain ZeRO): world
// rank k * g + i is member i of shard group k. Within a group the stage shards
// values, gradients and optimizer state over its g members exactly as plain ZeRO shards them over
// W ranks (param_group.h's layout with world g); member i of every group holds the same shard, so
// the W / g groups are replicas of each other. What runs where:
// - gathers of values (stage 3's fetches, stages 1-2's refresh after a step), the gathered
//   optimizer state of a checkpoint's full_optimizer_state, Lamb's norm slots and the gradient
//   norm's partials run over the group: each group holds the whole model, so the chunked norm
//   ([Note: chunked gradient norm]) adds the same nonzero partials in the same order as over the
//   world (the group's layout only adds or drops zero padding chunks);
// - gradients are summed over all W ranks by comm::hybrid_reduce_scatter ([Note: hybrid
//   reduction]), in global rank order on host backends, so the result is bitwise plain ZeRO's;
// - the initial broadcast, the loss and token sums and the parameter checks run over the world;
// - a checkpoint holds group 0's shards: the other groups' ranks are replicas
//   (ZeroStage::shard_is_replica) and write nothing; the reader serves any range from any rank's
//   file, so a hybrid run resumes into plain ZeRO and back, at any stage or world size.
// Unlike DeepSpeed's hpZ (ZeRO++), which keeps only a secondary copy of the parameters within the
// node and still shards the optimizer state over the world, the optimizer state here is
// replicated across the groups: per rank, the model states of plain ZeRO over g ranks.
#pragma once

#include <memory>

#include "zerotrain/comm/communicator.h"
#include "zerotrain/zero/zero_config.h"

namespace zt::zero {

class ShardComms {
 public:
  // Plain ZeRO: shards over `world` (which outlives this object).
  explicit ShardComms(comm::Communicator& world);
  // config.zero_hpz_partition_size 1, world.size() or more: plain; a smaller divisor of it: hybrid
  // sharding over groups of that many consecutive ranks (collective over world: it splits it).
  // Throws ValueError for anything else (hybrid_sharding in zero_config.h).
  ShardComms(comm::Communicator& world, const ZeroConfig& config);

  comm::Communicator& world() const { return *world_; }
  // The ranks one group's shards spread over: the world, or this rank's shard group.
  comm::Communicator& shard() const { return group_ ? *group_ : *world_; }
  bool hybrid() const { return group_ != nullptr; }
  // This rank's shard group (0 when plain): the groups after the first hold replicas.
  int replica() const { return replicas_ ? replicas_->rank() : 0; }

  // recv (recv_count) = sum over every rank of the world of send's chunk shard().rank()
  // (shard().size() x recv_count elements), in rank order on host backends: bitwise the flat
  // reduce_scatter of plain ZeRO. recv may be send's own chunk.
  void reduce_scatter(const void* send, void* recv, size_t recv_count, DType dtype,
                      comm::ReduceOp op, Stream stream) const;

 private:
  comm::Communicator* world_;
  std::unique_ptr<comm::Communicator> group_;     // this rank's shard group (hybrid only)
  std::unique_ptr<comm::Communicator> replicas_;  // member shard().rank() of every group
};

}  // namespace zt::zero
