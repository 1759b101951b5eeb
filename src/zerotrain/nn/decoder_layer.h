// One transformer layer ("model.layers.i" / "transformer.h.i"), pre-norm with two residual
// branches, as Hugging Face's decoder layers compute it:
//   h = x + attn(norm1(x));  y = h + mlp(norm2(h))
// llama family: input_layernorm / self_attn / post_attention_layernorm / mlp (RMSNorm, SwiGLU);
// gpt2: ln_1 / attn / ln_2 / mlp (LayerNorm, GELU-tanh). The sublayers are the kinds the family's
// Architecture names (nn/layer_parts.h). Tested by tests/nn/test_transformer_*.cpp.
#pragma once

#include <memory>

#include "zerotrain/nn/architecture.h"
#include "zerotrain/nn/block.h"
#include "zerotrain/nn/norm.h"
#include "zerotrain/nn/sublayer.h"

namespace zt::nn {

class DecoderLayerBlock : public Block {
 public:
  DecoderLayerBlock(const ModelConfig& config, int64_t index);

  std::string name() const override { return name_; }
  std::vector<Parameter*> parameters() override;
  Tensor forward(const Tensor& x, const StepContext& ctx) override;
  Tensor backward(const Tensor& dy, const StepContext& ctx) override;
  void release_saved() override;
  bool checkpointable() const override { return true; }

 private:
  std::string name_;
  int64_t hidden_;
  bool norms_interleaved_;  // Architecture::norms_interleaved: the parameters' listing order
  Norm norm1_, norm2_;
  std::unique_ptr<Sublayer> attn_, mlp_;
  TokenDims dims_;      // of the last forward
  bool saved_ = false;  // a forward's activations are held
  // Saved activations live in the norms and sublayers (x and h are their inputs).
};

}  // namespace zt::nn
