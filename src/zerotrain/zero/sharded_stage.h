// ZeRO stages 1, 2 and 3: one ParamGroup per block, gradients reduce-scattered per group right
// after the block's backward on the boundary micro-step, the flat optimizer on this rank's shards.
// What differs between the stages is two decisions, each made by the subclass's type: whether the
// full values stay (1, 2) or are gathered around each use (3), and whether the full gradient stays
// (1) or is dropped after its reduce-scatter (2, 3). Stage 3 lives in stage3.h. See
// [Note: ZeRO stages] in zero_stage.h. Tested by tests/mpi/test_zero_parity.cpp and
// tests/zero/test_zero_stage.cpp.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "zerotrain/core/stream.h"

#include "zerotrain/zero/param_group.h"
#include "zerotrain/zero/zero_stage.h"

namespace zt::zero {

class ShardedStage : public ZeroStage {
 public:
  nn::BlockHooks hooks() override;
  void begin_micro_step(bool boundary) override;
  void finish_gradient_sync() override;
  double grad_norm() override;
  void step(float lr, float grad_scale) override;
  void zero_grad() override;
  MemoryBytes memory() const override;
  void check_parameters_identical() override;
  void begin_full_parameters() override { refresh_all(); }

 protected:
  // replicated_values: every rank keeps the full values (stages 1, 2).
  ShardedStage(std::vector<std::unique_ptr<nn::Block>>& blocks, const ZeroContext& ctx,
               const ZeroOptions& options, const optim::OptimizerState& initial,
               bool replicated_values);

  // Around every forward (backward false) and backward of `block`: stage 3 gathers and releases.
  virtual void before_use(size_t block, bool backward) { (void)block, (void)backward; }
  virtual void after_use(size_t block, bool backward) { (void)block, (void)backward; }
  // Whether a group's full gradient stays after its reduce-scatter (stage 1).
  virtual bool keeps_full_grads() const = 0;
  // After the optimizer step: stages 1 and 2 all-gather the updated shards (an offloaded
  // group's only before its next use, refresh(), once the host has stepped it).
  virtual void after_step() = 0;
  void after_shard_load() override { after_step(); }
  // Before a use of `block`'s values: its stale groups' updates are awaited and gathered.
  void refresh(size_t block);
  void refresh_all();
  std::vector<bool> stale_;  // per group: a host update not yet gathered into the full values

  std::vector<std::vector<size_t>> uses_;  // per block: the groups it reads (own, then shared)

 private:
  void after_backward(size_t block);
  void reduce_group(size_t g);
  // Compute-stream waits for in-flight reduce-scatters (all, or all but the latest) and drops the
  // full gradient buffers they read.
  void retire_reductions(bool keep_latest);

  std::vector<int> own_group_;     // per block: its group, or -1 without parameters
  std::vector<bool> reduced_;      // per group, on the boundary micro-step
  DType grad_dtype_ = DType::f32;  // accumulation ([Note: communication dtype] in grad_comm.h)
  DType comm_dtype_ = DType::f32;  // reduce-scatters
  bool boundary_ = false;
  Tensor partials_;       // [sum over groups of shard_numel / kNormChunk] f32
  Tensor host_partials_;  // the gathered partials' host copy (grad_norm.h: partials_on_host)
  // GPU with overlap_comm, see [Note: sharded reduce overlap]: the gradient reduce-scatters run on
  // ctx_'s reduce stream (comm_streams.h) while earlier blocks' backward goes on; null: on compute.
  CudaStream* comm_stream_ = nullptr;
  std::vector<CudaEvent> grad_ready_;    // per group: its gradient is complete (compute stream)
  std::vector<CudaEvent> grad_reduced_;  // per group: its reduce-scatter is done (comm stream)
  std::vector<Tensor> in_flight_;        // per group: the full gradient its reduce-scatter reads
  std::vector<size_t> pending_;          // groups with a reduce-scatter not yet waited for
};

// Stage 1: optimizer state sharded.
class Stage1 : public ShardedStage {
 public:
  Stage1(std::vector<std::unique_ptr<nn::Block>>& blocks, const ZeroContext& ctx,
         const ZeroOptions& options, const optim::OptimizerState& initial)
      : ShardedStage(blocks, ctx, options, initial, true) {}
  int stage() const override { return 1; }

 protected:
  bool keeps_full_grads() const override { return true; }
  void after_step() override;
};

// Stage 2: optimizer state and gradients sharded.
class Stage2 final : public Stage1 {
 public:
  using Stage1::Stage1;
  int stage() const override { return 2; }

 protected:
  bool keeps_full_grads() const override { return false; }
};

}  // namespace zt::zero
