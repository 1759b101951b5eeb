// GPT-2 attention ("<prefix>.c_attn", "<prefix>.c_proj"): Conv1D weights stored [in, out] (used
// where they lie: no transposed copy), q/k/v fused in c_attn's output columns [q | k | v], biases,
// learned positions (no RoPE), all heads full (no grouped-query). Tested by
// tests/nn/test_attention_layer.cpp.
#pragma once

#include <string>

#include "zerotrain/nn/architecture.h"
#include "zerotrain/nn/causal_attention.h"
#include "zerotrain/nn/linear.h"
#include "zerotrain/nn/sublayer.h"

namespace zt::nn {

class Gpt2Attention : public Sublayer {
 public:
  Gpt2Attention(const std::string& prefix, const ModelConfig& config);

  Tensor forward(const Tensor& x, TokenDims dims, Stream stream) override;
  Tensor backward(const Tensor& dy, Stream stream) override;
  void release() override;
  void append_parameters(std::vector<Parameter*>& out) override;

  Linear c_attn;  // weight [C, 3C], bias [3C]
  Linear c_proj;  // weight [C, C], bias [C]

 private:
  int64_t heads_, head_dim_;
  CausalAttention core_;
  TokenDims dims_;
  Tensor x_;    // [N, C] compute dtype: the input (normed hidden states)
  Tensor out_;  // [N, C] compute dtype: attention output, c_proj's input
};

}  // namespace zt::nn
