// The last block: final norm ("model.norm" / gpt2 "transformer.ln_f"), the vocabulary projection
// ("lm_head.weight" [V, C], or the token embedding when word embeddings are tied) and the
// cross-entropy loss: the sum over targets != -100 divided by ctx.num_items_in_batch (Hugging
// Face's ForCausalLMLoss with the labels already shifted: ctx.targets holds the next-token ids).
//
// [Note: loss normalisation] As transformers >= 4.46 does with num_items_in_batch: the loss of an
// optimizer step is the sum of the per-token losses over every unmasked target of all its
// micro-batches, accumulation steps and ranks, divided by the global count of unmasked targets
// (not a mean of per-micro-batch means, which weighs a token of a mostly masked micro-batch more).
// The trainer counts the targets of the step's host batches before its first micro-batch
// (nn/loss_targets.h) and sums the counts over the ranks with one small collective per step;
// every head then returns its micro-batch's share, local sum / global count, and its gradient
// carries loss_scale / global count. The ZeRO reductions only sum, so the gradients summed over
// micro-batches and ranks are exactly those of the global mean, divided once. A micro-batch whose
// targets are all masked contributes 0 to loss and gradients; a step with none at all has loss 0
// and zero gradients. Without a count in the context (-1) the head uses its own micro-batch's,
// which is the plain mean of one batch.
//
// [Note: fused loss] forward runs kernels::cross_entropy_fused: one pass turns the [N, V] logits
// into their gradient for ctx.loss_scale / num_items_in_batch, so no second [N, V] buffer ever
// exists. backward then needs only two GEMMs; should ctx.loss_scale differ from the forward's, the
// GEMMs rescale by the ratio.
// Tested by tests/nn/test_head_block.cpp, tests/mpi/test_loss_normalisation.cpp and the whole
// model tests.
#pragma once

#include "zerotrain/nn/architecture.h"
#include "zerotrain/nn/block.h"
#include "zerotrain/nn/norm.h"
#include "zerotrain/nn/sublayer.h"

namespace zt::nn {

class HeadBlock : public Block {
 public:
  // tied_embedding: the token table to project with (tie_word_embeddings), or null for lm_head.
  HeadBlock(const ModelConfig& config, Parameter* tied_embedding);

  std::string name() const override { return "lm_head"; }
  std::vector<Parameter*> parameters() override;
  std::vector<Parameter*> shared_parameters() override;
  // x: [B, S, C] -> loss f32 [1]: the sum over unmasked targets / ctx.num_items_in_batch (0 when
  // every target is ignored).
  Tensor forward(const Tensor& x, const StepContext& ctx) override;
  Tensor backward(const Tensor& dy, const StepContext& ctx) override;
  void release_saved() override;

  // The logits [B, S, V] in the compute dtype, without loss or saved state (evaluation, parity).
  Tensor logits(const Tensor& x, const StepContext& ctx);

  Norm norm;

 private:
  Parameter& projection() { return tied_ ? *tied_ : lm_head_; }

  Parameter* tied_;
  Parameter lm_head_;  // [V, C] unless tied
  int64_t hidden_, vocab_;
  TokenDims dims_;
  Tensor normed_;            // [N, C] compute dtype: norm output, the projection's input
  Tensor dlogits_;           // [N, V] compute dtype: d(loss * loss_scale_) / d(logits)
  float loss_scale_ = 1.0f;  // ctx.loss_scale that dlogits_ was computed with
};

}  // namespace zt::nn
