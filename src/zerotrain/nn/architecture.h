// What each model family builds, as Hugging Face's modeling_llama.py / modeling_mistral.py /
// modeling_qwen2.py / modeling_gpt2.py define it: which norm, which biases, which MLP, how
// positions enter, how projection weights are laid out. The layers, the blocks and the parameter
// count (model_config.cpp) all read it here. Tested by tests/nn/test_model_config.cpp.
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

// llama: biases from attention_bias (q/k/v/o) and mlp_bias; mistral: no biases; qwen2: q/k/v biases
// always, none elsewhere; gpt2: biases everywhere.
Architecture architecture_of(const ModelConfig& c);

}  // namespace zt::nn
