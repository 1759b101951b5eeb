// A block with several experts: a mixture-of-experts layer (Mixtral's block_sparse_moe, Qwen2-MoE's
// mlp) as ONE block, so the ZeRO engine gathers, runs and releases all its experts together.
//
// [Note: experts as one unit]
// - The ZeRO engine's unit is the block: one ParamGroup per block, holding its parameters() in
//   order (zero/param_group.h); stage 3 gathers that group before the block's forward, backward
//   and recomputation and releases it after ([Note: ZeRO stages] in zero/zero_stage.h). An
//   ExpertBlock lists the router's and the layer's other parameters and every expert's in its
//   parameters(), so one gather brings all experts, and check_expert_unit() says so.
// - Each expert is a Sublayer ([N, C] -> [N, C], e.g. a GatedMlp named "<layer>.experts.<e>"),
//   which is what a router calls. Forward: the router's logits from its own parameters, the top-k
//   experts and weights per token, then for e = 0, 1, ... in order: expert(e).forward on the rows
//   routed to e (gathered into [n_e, C]; an expert with no rows is skipped), and the weighted
//   outputs scattered back. Backward: expert(e).backward per expert in the same fixed order (so
//   the input gradient's sums are deterministic), then the router's. An expert that got no rows
//   adds nothing to its gradients: the group's buffer was zeroed, and the group is reduced whole,
//   so every rank reduces the same buffer whatever it routed.
// - Activation checkpointing: the routing is a deterministic function of the input and the
//   router's values, so the recomputation routes the same rows again and calls expert(e).recompute.
// - The memory estimator's per-block gather is the whole block here: all experts' values, and in
//   backward all their gradients (estimate/ counts a block's parameter bytes from parameters()).
// - Checkpoints and HF weight names see plain parameters ("...experts.3.w1.weight"); nothing
//   about experts reaches the checkpoint format.
// Tested by tests/nn/test_expert_block.cpp and tests/zero/test_zero_expert_unit.cpp.
#pragma once

#include <memory>
#include <vector>

#include "zerotrain/nn/block.h"
#include "zerotrain/nn/sublayer.h"

namespace zt::nn {

class ExpertBlock : public Block {
 public:
  int64_t num_experts() const { return static_cast<int64_t>(experts_.size()); }
  // Expert e, as the router runs it on the rows routed to e.
  Sublayer& expert(int64_t e);
  // Expert e's parameters, in its append_parameters() order.
  std::vector<Parameter*> expert_parameters(int64_t e);

 protected:
  // Throws ValueError when there are no experts or one is null.
  explicit ExpertBlock(std::vector<std::unique_ptr<Sublayer>> experts);
  // For parameters(): appends every expert's parameters, expert 0 first.
  void append_expert_parameters(std::vector<Parameter*>& out);

 private:
  std::vector<std::unique_ptr<Sublayer>> experts_;
};

// Throws ValueError unless every expert's parameters are among block.parameters(), each exactly
// once, so that the block's one ZeRO group holds them all.
void check_expert_unit(ExpertBlock& block);

}  // namespace zt::nn
