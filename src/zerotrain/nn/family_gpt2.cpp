// GPT-2 (transformers' modeling_gpt2.py): LayerNorm, GELU-tanh MLP, learned positions, Conv1D
// projections with q/k/v fused, biases everywhere, and the residual projections' init scaled by
// 1/sqrt(2 * num_layers). See nn/family_traits.h.
#include "zerotrain/nn/family_traits.h"

namespace zt::nn {

namespace {
Architecture architecture(const ModelConfig&) {
  Architecture a;
  a.layer_norm = a.learned_positions = a.norms_interleaved = true;
  a.attention = AttentionKind::gpt2;
  a.mlp = MlpKind::gpt2_gelu;
  a.qkv_bias = a.o_bias = a.mlp_bias = true;
  return a;
}
}  // namespace

const FamilyTraits& gpt2_family() {
  static const FamilyTraits traits = {
      .family = Family::gpt2,
      .name = "gpt2",
      .architecture = architecture,
      .hf = {.base_prefix = "transformer.",
             .embed_tokens = "transformer.wte",
             .positions = "transformer.wpe",
             .layer_prefix = "transformer.h.",
             .input_norm = ".ln_1",
             .attention = ".attn",
             .post_attention_norm = ".ln_2",
             .final_norm = "transformer.ln_f",
             .causal_lm_class = "GPT2LMHeadModel"},
      .scaled_init_suffix = ".c_proj.weight",
  };
  return traits;
}

}  // namespace zt::nn
