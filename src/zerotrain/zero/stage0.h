// ZeRO stage 0 behind the ZeroStage interface: one ParamGroup per block replicated over a world of
// one (the values in its flat buffer), DataParallel's bucketed all-reduce (with one rank, the same
// flat gradient buckets without communication), the chunked global norm over full gradients,
// and the flat optimizer stepping each group's parameters with its block's slice of a gradient
// bucket. See [Note: ZeRO stages] in zero_stage.h. Tested by tests/mpi/test_ddp_training.cpp and
// tests/mpi/test_zero_parity.cpp.
#pragma once

#include <memory>

#include "zerotrain/zero/data_parallel.h"
#include "zerotrain/zero/zero_stage.h"

namespace zt::zero {

class Stage0 final : public ZeroStage {
 public:
  Stage0(std::vector<std::unique_ptr<nn::Block>>& blocks, const ZeroContext& ctx,
         const ZeroOptions& options, const optim::OptimizerState& initial);

  int stage() const override { return 0; }
  nn::BlockHooks hooks() override;
  void begin_micro_step(bool boundary) override;
  void finish_gradient_sync() override;
  double grad_norm() override;
  void step(float lr, float grad_scale) override;
  void zero_grad() override;
  void check_parameters_identical() override;
  MemoryBytes memory() const override;

 private:
  const GradBuckets& buckets() const { return dp_->buckets(); }

  std::unique_ptr<DataParallel> dp_;  // one rank: the same buckets, nothing to reduce
  std::vector<Tensor> group_grads_;   // per group: [numel] its block's gradients (a bucket view)
  Tensor partials_;                   // [sum of norm_chunks] f32
  Tensor host_partials_;              // their host copy (grad_norm.h: partials_on_host)
};

}  // namespace zt::zero
