// GPT-2 MLP: c_proj(gelu_tanh(c_fc(x))) ("<prefix>.c_fc" weight [C, I], "<prefix>.c_proj" weight
// [I, C]: Conv1D layout, used where it lies; biases). Keeps the pre-activation; the activation is
// recomputed in backward. Tested by tests/nn/test_mlp.cpp.
#pragma once

#include <string>

#include "zerotrain/nn/linear.h"
#include "zerotrain/nn/model_config.h"
#include "zerotrain/nn/sublayer.h"

namespace zt::nn {

class GeluMlp : public Sublayer {
 public:
  GeluMlp(const std::string& prefix, const ModelConfig& config);

  Tensor forward(const Tensor& x, TokenDims dims, Stream stream) override;
  Tensor backward(const Tensor& dy, Stream stream) override;
  void release() override;
  void append_parameters(std::vector<Parameter*>& out) override;
  // Only c_fc: the backward computes the activation from pre_ anyway.
  void recompute(const Tensor& x, TokenDims dims, Stream stream) override;

  Linear c_fc, c_proj;

 private:
  Tensor x_;    // [N, C] compute dtype: the input
  Tensor pre_;  // [N, I] compute dtype: c_fc(x), before the activation
};

}  // namespace zt::nn
