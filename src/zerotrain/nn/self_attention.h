// Llama-family attention ("<prefix>.q_proj/k_proj/v_proj/o_proj", nn.Linear layout): grouped-query
// heads, RoPE, optional q/k/v (qwen2, llama attention_bias) and o (llama attention_bias) biases,
// optional sliding window (mistral, qwen2). Tested by tests/nn/test_attention_layer.cpp.
#pragma once

#include <string>

#include "zerotrain/nn/architecture.h"
#include "zerotrain/nn/causal_attention.h"
#include "zerotrain/nn/linear.h"
#include "zerotrain/nn/sublayer.h"

namespace zt::nn {

class SelfAttention : public Sublayer {
 public:
  SelfAttention(const std::string& prefix, const ModelConfig& config, const Architecture& arch);

  Tensor forward(const Tensor& x, TokenDims dims, Stream stream) override;
  Tensor backward(const Tensor& dy, Stream stream) override;
  void release() override;
  void append_parameters(std::vector<Parameter*>& out) override;

  Linear q_proj, k_proj, v_proj, o_proj;

 private:
  int64_t heads_, kv_heads_, head_dim_;
  CausalAttention core_;
  TokenDims dims_;
  Tensor x_;    // [N, C] compute dtype: the input (normed hidden states)
  Tensor out_;  // [N, Hq * D] compute dtype: attention output, o_proj's input
};

}  // namespace zt::nn
