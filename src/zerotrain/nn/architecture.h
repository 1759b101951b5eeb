// What a model builds, as its family's Hugging Face modeling_<name>.py defines it: which norm,
// which biases, which MLP, how positions enter, how projection weights are laid out. Each family
// says which in its nn/family_<name>.cpp; the layers, the blocks and the parameter count
// (model_config.cpp) all read it here. Tested by tests/nn/test_model_config.cpp.
#pragma once

#include "zerotrain/nn/model_config.h"

namespace zt::nn {

struct Architecture {
  bool layer_norm = false;         // LayerNorm with bias (gpt2); otherwise RMSNorm without bias
  bool rotary = false;             // RoPE on q and k (llama, mistral, qwen2)
  bool learned_positions = false;  // a wpe table added to the token embedding (gpt2)
  bool conv1d = false;     // GPT-2 Conv1D projections: weights [in, out], q/k/v fused in c_attn
  bool qkv_bias = false;   // biases on the q, k, v projections
  bool o_bias = false;     // bias on the output projection
  bool mlp_bias = false;   // biases on the MLP projections
  bool gated_mlp = false;  // SwiGLU gate/up/down; otherwise GELU-tanh c_fc/c_proj
  bool sliding_window = false;  // config.sliding_window limits attention (mistral, qwen2)
};

// The architecture c's family builds for c (FamilyTraits::architecture).
Architecture architecture_of(const ModelConfig& c);

}  // namespace zt::nn
