// Forward/backward over the blocks with optional activation checkpointing (see block_runner.h).
// Each block's forward, backward and recomputation is a profiler range named after the block.
#include "zerotrain/nn/block_runner.h"

#include "zerotrain/core/error.h"
#include "zerotrain/core/profile_range.h"
#include "zerotrain/nn/decoder_layer.h"

namespace zt::nn {

BlockRunner::BlockRunner(std::vector<std::unique_ptr<Block>>& blocks, RunnerOptions options)
    : blocks_(blocks), options_(options), inputs_(blocks.size()) {}

bool BlockRunner::checkpointed(size_t i) const {
  return options_.checkpoint_layers && dynamic_cast<const DecoderLayerBlock*>(blocks_[i].get());
}

Tensor BlockRunner::forward(const StepContext& ctx) {
  if (blocks_.empty()) throw ValueError("block_runner", "no blocks to run");
  inputs_.assign(blocks_.size(), Tensor{});
  Tensor x;
  for (size_t i = 0; i < blocks_.size(); ++i) {
    const ProfileRange range("forward " + blocks_[i]->name());
    if (hooks_.before_forward) hooks_.before_forward(i);
    Tensor y = blocks_[i]->forward(x, ctx);
    if (hooks_.after_forward) hooks_.after_forward(i);
    if (checkpointed(i)) {
      blocks_[i]->release_saved();
      inputs_[i] = x;
    }
    x = std::move(y);
  }
  forward_done_ = true;
  return x;
}

void BlockRunner::backward(const StepContext& ctx) {
  if (!forward_done_) throw ValueError("block_runner", "backward without a forward");
  forward_done_ = false;
  Tensor dy;
  for (size_t i = blocks_.size(); i-- > 0;) {
    const ProfileRange range("backward " + blocks_[i]->name());
    if (hooks_.before_backward) hooks_.before_backward(i);
    if (checkpointed(i)) {
      const ProfileRange recompute("recompute " + blocks_[i]->name());
      StepContext again = ctx;
      again.recomputing = true;
      blocks_[i]->forward(inputs_[i], again);  // rebuild the saved activations
      inputs_[i] = {};
    }
    dy = blocks_[i]->backward(dy, ctx);
    if (hooks_.after_backward) hooks_.after_backward(i);
  }
}

Tensor BlockRunner::forward_backward(const StepContext& ctx) {
  Tensor loss = forward(ctx);
  backward(ctx);
  return loss;
}

}  // namespace zt::nn
