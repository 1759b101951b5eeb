// The ZeRO stage as a strategy, chosen once from the config by make_zero_stage(): what runs around
// each block's forward and backward, how gradients are reduced, the global gradient norm and the
// optimizer step. The trainer only talks to this interface. Every stage runs in a ZeroContext
// (zero_context.h: communicator, device, compute stream, side streams), is given an OffloadPolicy
// (offload_policy.h: where its optimizer runs and value shards live, [Note: optimizer offload] in
// shard_optimizer.h) and can write and read its own rank's shard (shard_checkpoint.h). Tested by
// tests/mpi/test_zero_parity.cpp (every stage against stage 0 under mpirun) and
// tests/zero/test_zero_stage.cpp (one process).
//
// [Note: ZeRO stages]
// - Every stage keeps one ParamGroup per block (param_group.h) and steps it with the one flat
//   optimizer (optim/flat_optimizer.h, whichever update rule optimizer_options.h names), started
//   from the initial optimizer state make_zero_stage is given (fresh or a checkpoint's).
// - Stage 0 (stage0.h): the groups are replicated over a world of one (as FSDP2 treats DDP as
//   sharding over a world of one): full values, gradients and optimizer state on every rank; the
//   gradients live in the bucketed all-reduce's buffers (zero/data_parallel.h), each group's
//   gradient being its block's slice of a bucket; the flat optimizer steps each group's parameters.
// - Stage 1 (sharded_stage.h): the groups are sharded over the ranks; full values and full
//   gradients stay; on the boundary micro-step each group's gradient is reduce-scattered in place
//   right after its block's backward; the flat optimizer steps this rank's shard; the updated
//   shards are all-gathered into every rank's full values.
// - Stage 2: as 1, but a group's full gradient buffer exists only from the first backward that
//   touches it in an optimizer step until its reduce-scatter on the boundary micro-step; then only
//   the shard stays. On non-boundary micro-steps the full buffer accumulates locally: reducing
//   every micro-step would add the ranks' contributions in another order than stage 0 and lose
//   bitwise parity, so the full buffer lives across the accumulation (with grad_accum 1 it lives
//   for one backward only).
// - Stage 3 (stage3.h): as 2, and the values too: each rank keeps its value shard only; a
//   block's groups (its own and those of shared parameters, e.g. the tied embedding the head
//   uses) are gathered before its forward and again before its backward (with a bounded
//   prefetch) and released after each, except groups under the persistence threshold, which stay
//   gathered and are refreshed after each step.
// - The sharded stages reduce one block's group per collective: reduce_bucket_size and
//   DeepSpeed's allgather_bucket_size do not apply to them.
// - Hybrid sharding (stages 1-3, ZeroConfig::zero_hpz_partition_size): the same stages over a
//   shard group of consecutive ranks instead of the world, replicated across the groups, with
//   gradients summed over the world in rank order ([Note: hybrid sharding] in shard_comms.h): the
//   same bits.
// Every stage clips with the same chunked norm ([Note: chunked gradient norm]) and reduces
// gradients with the same rank-ordered sums, in the same accumulation and communication dtypes
// ([Note: communication dtype] in grad_comm.h), so stages 1-3 reproduce stage 0 bitwise.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zerotrain/comm/communicator.h"
#include "zerotrain/nn/block.h"
#include "zerotrain/nn/block_runner.h"
#include "zerotrain/optim/optimizer_state.h"
#include "zerotrain/zero/optimizer_options.h"
#include "zerotrain/zero/param_group.h"
#include "zerotrain/zero/param_swap.h"
#include "zerotrain/zero/shard_checkpoint.h"
#include "zerotrain/zero/shard_comms.h"
#include "zerotrain/zero/shard_optimizer.h"
#include "zerotrain/zero/zero_config.h"
#include "zerotrain/zero/zero_context.h"

namespace zt::zero {

// Bytes of model state one rank holds (at the moment of the call): on the training device, and
// in host memory for what offload keeps there (pinned or not; swap files on an NVMe path are not
// memory and are counted apart).
struct MemoryBytes {
  int64_t params = 0, grads = 0, optimizer = 0;
  int64_t host_params = 0, host_grads = 0, host_optimizer = 0;
  int64_t nvme = 0;  // bytes in this rank's swap files
};

class ZeroStage {
 public:
  virtual ~ZeroStage() = default;
  virtual int stage() const = 0;
  int world_size() const { return comm_.size(); }

  // For nn::BlockRunner::set_hooks; they call back into this object.
  virtual nn::BlockHooks hooks() = 0;
  // Starts a micro-step; `boundary`: the last of the accumulation, whose gradients are reduced.
  virtual void begin_micro_step(bool boundary) = 0;
  // After the boundary micro-step's backward: every gradient reduced (throws when one was not).
  virtual void finish_gradient_sync() = 0;
  // Collective: the global gradient L2 norm ([Note: chunked gradient norm]).
  virtual double grad_norm() = 0;
  // One optimizer update (gradients times grad_scale), leaving the values ready for the next step.
  virtual void step(float lr, float grad_scale) = 0;
  // Zeroes (or drops) the gradients before a step's first micro-step.
  virtual void zero_grad() = 0;
  // The betas of the next updates (a scheduler that cycles momentum, OneCycle). Throws ValueError
  // unless both are in [0, 1).
  void set_betas(double beta1, double beta2) { optimizer_->set_betas(beta1, beta2); }
  int64_t step_count() const { return optimizer_->step_count(); }

  // Sum over ranks of one value per rank, added in rank order (the same result on every rank).
  double sum_over_ranks(double value);
  // Collective: throws ValueError naming ranks whose full values differ from rank 0's (stage 3
  // checks only the groups it keeps gathered).
  virtual void check_parameters_identical() = 0;

  // A forward without backward (evaluation, train/evaluation.h) runs between these two, under
  // hooks()' before_forward / after_forward: stage 3 then gathers ahead only for the next blocks'
  // forward and releases each group after its forward use, so that afterwards the stage holds
  // exactly what it held before. The forward's gathers are collective; these two are not.
  virtual void begin_forward_only() {}
  virtual void end_forward_only() {}

  // Collective: every parameter's `value` holds its full value (stage 3 gathers) until
  // end_full_parameters().
  virtual void begin_full_parameters() {}
  virtual void end_full_parameters() {}
  // Collective: calls `visit` on every group in block order while its parameters' `value` hold
  // their full values. Stage 3 gathers one group at a time and releases it after the call (the
  // memory of one group beyond the shards); the other stages refresh the full values they keep.
  virtual void for_each_full_group(const std::function<void(const ParamGroup&)>& visit);
  // Collective: the full optimizer state in checkpoint naming (optim/optimizer_state.h),
  // complete on rank 0 (the sharded stages gather it into host memory there, group by group);
  // other ranks may get only the step.
  optim::OptimizerState full_optimizer_state();
  virtual MemoryBytes memory() const = 0;

  // The seam of sharded checkpoints (shard_checkpoint.h): this rank's values, masters and moments
  // of every piece its optimizer steps, and the step. Not collective.
  void save_shard(ShardWriter& out);
  // True on the ranks other than 0 of a replicated stage (0), and on the ranks of every shard group
  // but the first with hybrid sharding: their shard is a copy of one that a checkpoint needs once.
  bool shard_is_replica() const;
  // Collective: reads back what save_shard wrote with the same stage, world and model (a fresh
  // engine continues bitwise where the saving one stood), then refreshes the full values the
  // stage keeps from the shards.
  void load_shard(ShardReader& in);

  // The groups, in block order (blocks without parameters have none).
  const std::vector<std::unique_ptr<ParamGroup>>& groups() const { return groups_; }

 protected:
  explicit ZeroStage(const ZeroContext& ctx)
      : ctx_(ctx),
        comm_(ctx.comm()),
        device_(ctx.device()),
        stream_(ctx.compute()),
        shards_(comm_) {}
  ZeroContext ctx_;           // also the owner of the side streams
  comm::Communicator& comm_;  // ctx_.comm(): one rank in a one-process run
  Device device_;             // ctx_.device()
  Stream stream_;             // the compute stream; collectives without a side stream run on it too
  // The ranks the groups' shards spread over: comm_, or with hybrid sharding this rank's shard
  // group, set by the sharded stages' constructors ([Note: hybrid sharding] in shard_comms.h).
  ShardComms shards_;

  // offload_param nvme: where the groups' value shards live (declared first: it outlives the
  // groups and the optimizer's worker, which use it).
  std::unique_ptr<ParamSwap> param_swap_;
  std::vector<std::unique_ptr<ParamGroup>> groups_;  // in block order
  std::unique_ptr<ShardOptimizer> optimizer_;        // steps every group's run

  // After load_shard: the full values the stage keeps (stages 1, 2 and 3's persistent groups)
  // gathered again from the shards.
  virtual void after_shard_load() {}
  // Collective: compares an FNV-1a checksum of `params`' values across the ranks.
  void check_identical(const std::vector<nn::Parameter*>& params);
  std::vector<ParamGroup*> group_pointers() const;
};

class ShardSource;  // shard_init.h

struct ZeroOptions {
  // The user's section (zero_config.h): stage, bucket size, overlap, stage 3's persistence
  // threshold and prefetch bounds ([Note: stage 3 prefetch]), each validated once there.
  ZeroConfig config;
  // The dtype gradients accumulate in over the micro-steps (data_types.grad_accum_dtype: f32 or
  // the model's dtype) and the dtype they are reduced in across the ranks
  // (communication_data_type: f32, bf16 or f16); unset: the model's gradients' dtype (f32 when
  // none is allocated) and the accumulation dtype. See [Note: communication dtype] in grad_comm.h.
  std::optional<DType> grad_dtype;
  std::optional<DType> comm_dtype;
  // Where the groups' values come from, of initial_values_dtype (not owned; used during
  // make_zero_stage only). Set: the model's values are undefined (built with
  // nn::TransformerOptions::allocate = false) and every rank fills the stage's own buffers from
  // the source, nothing broadcast: stage 3 only its value shards (zero.Init, [Note: zero.Init] in
  // shard_init.h), stages 0-2 each group's full buffer ([Note: values built in place]). Null: the
  // groups take the model's values, broadcast from rank 0.
  ShardSource* initial_values = nullptr;
  DType initial_values_dtype = DType::f32;
  // The optimizer: the update rule and its settings, precision policy, precision guard.
  OptimizerOptions optimizer;
};

// Builds the stage in `ctx` (a one-process run: ZeroContext::one_process). blocks and ctx's
// communicator outlive it. `initial`: the
// optimizer state to start from, fresh (step 0, no tensors) or a full state read from a
// checkpoint, of which each rank takes its shard (checked whole on every rank, see
// optim::FlatOptimizer::load_state). Broadcasts rank 0's values unless options.initial_values
// builds them. Throws ValueError for a stage outside 0-3, a gradient / communication dtype other
// than f32, bf16 or f16, or an offload policy other than none.
std::unique_ptr<ZeroStage> make_zero_stage(const ZeroOptions& options,
                                           std::vector<std::unique_ptr<nn::Block>>& blocks,
                                           const ZeroContext& ctx,
                                           const optim::OptimizerState& initial = {});

}  // namespace zt::zero
