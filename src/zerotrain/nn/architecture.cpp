// Family -> architecture table (see architecture.h).
#include "zerotrain/nn/architecture.h"

namespace zt::nn {

Architecture architecture_of(const ModelConfig& c) {
  Architecture a;
  switch (c.family) {
    case Family::llama:
      a.rotary = a.gated_mlp = true;
      a.qkv_bias = a.o_bias = c.attention_bias;
      a.mlp_bias = c.mlp_bias;
      break;
    case Family::mistral:
      a.rotary = a.gated_mlp = a.sliding_window = true;
      break;
    case Family::qwen2:
      a.rotary = a.gated_mlp = a.sliding_window = true;
      a.qkv_bias = true;
      break;
    case Family::gpt2:
      a.layer_norm = a.learned_positions = a.conv1d = true;
      a.qkv_bias = a.o_bias = a.mlp_bias = true;
      break;
  }
  return a;
}

}  // namespace zt::nn
