// Llama (transformers' modeling_llama.py): RMSNorm, SwiGLU, RoPE, grouped-query attention; biases
// only as config.json asks (attention_bias on q/k/v/o, mlp_bias). See nn/family_traits.h.
#include "zerotrain/nn/family_traits.h"

namespace zt::nn {

namespace {
Architecture architecture(const ModelConfig& c) {
  Architecture a;
  a.rotary = true;
  a.qkv_bias = a.o_bias = c.attention_bias;
  a.mlp_bias = c.mlp_bias;
  return a;
}
}  // namespace

HfNames llama_layout_names(const char* causal_lm_class) {
  return {.base_prefix = "model.",
          .embed_tokens = "model.embed_tokens",
          .positions = "",
          .layer_prefix = "model.layers.",
          .input_norm = ".input_layernorm",
          .attention = ".self_attn",
          .post_attention_norm = ".post_attention_layernorm",
          .final_norm = "model.norm",
          .causal_lm_class = causal_lm_class};
}

const FamilyTraits& llama_family() {
  static const FamilyTraits traits = {
      .family = Family::llama,
      .name = "llama",
      .architecture = architecture,
      .hf = llama_layout_names("LlamaForCausalLM"),
      .scaled_init_suffix = "",
  };
  return traits;
}

}  // namespace zt::nn
