// The last block: final norm ("model.norm" / gpt2 "transformer.ln_f"), the vocabulary projection
// ("lm_head.weight" [V, C], or the token embedding when word embeddings are tied) and the
// cross-entropy loss, mean over targets != -100 (Hugging Face's ForCausalLMLoss with the labels
// already shifted: ctx.targets holds the next-token ids).
//
// [Note: fused loss] forward runs kernels::cross_entropy_fused: one pass turns the [N, V] logits
// into their gradient for ctx.loss_scale / valid_targets, so no second [N, V] buffer ever exists.
// backward then needs only two GEMMs; should ctx.loss_scale differ from the forward's, the GEMMs
// rescale by the ratio. Counting the valid targets reads ctx.targets on the host (one small copy).
// Tested by tests/nn/test_head_block.cpp and the whole model tests.
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
  // x: [B, S, C] -> mean loss f32 [1] (0 when every target is ignored).
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
