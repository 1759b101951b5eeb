// What a model builds, as its family's Hugging Face modeling_<name>.py defines it: which norm,
// which attention and MLP, which biases, how positions enter. Each family
// says which in its nn/family_<name>.cpp; the layers, the blocks and the parameter count
// (model_config.cpp) all read it here. Tested by tests/nn/test_model_config.cpp.
#pragma once

#include "zerotrain/nn/model_config.h"

namespace zt::nn {

// The attention a decoder layer runs (nn/layer_parts.h builds it).
enum class AttentionKind {
  projected,  // q_proj, k_proj, v_proj, o_proj (nn/self_attention.h): grouped heads, RoPE if rotary
  gpt2,       // c_attn (q, k, v fused) and c_proj, Conv1D weights [in, out] (nn/gpt2_attention.h)
};

// The MLP a decoder layer runs (nn/layer_parts.h builds it).
enum class MlpKind {
  swiglu,     // gate_proj, up_proj, down_proj with SiLU (nn/gated_mlp.h)
  gpt2_gelu,  // c_fc, c_proj with the tanh GELU, Conv1D weights [in, out] (nn/gelu_mlp.h)
};

struct Architecture {
  bool layer_norm = false;         // LayerNorm with bias (gpt2); otherwise RMSNorm without bias
  bool rotary = false;             // RoPE on q and k (llama, mistral, qwen2)
  bool learned_positions = false;  // a wpe table added to the token embedding (gpt2)
  AttentionKind attention = AttentionKind::projected;
  MlpKind mlp = MlpKind::swiglu;
  // A layer lists its parameters in its Hugging Face state dict's order, which the ZeRO groups'
  // flat layout follows: norm1, attention, norm2, MLP when true (gpt2's ln_1, attn, ln_2, mlp);
  // attention, MLP, then both norms otherwise (the llama family's).
  bool norms_interleaved = false;
  bool qkv_bias = false;        // biases on the q, k, v projections
  bool o_bias = false;          // bias on the output projection
  bool mlp_bias = false;        // biases on the MLP projections
  bool sliding_window = false;  // config.sliding_window limits attention (mistral, qwen2)
};

// The architecture c's family builds for c (FamilyTraits::architecture).
Architecture architecture_of(const ModelConfig& c);

}  // namespace zt::nn
