// RMSNorm (llama, mistral, qwen2: "<prefix>.weight") and LayerNorm (gpt2: "<prefix>.weight",
// "<prefix>.bias") over the last dimension, forward and backward over kernels/norm.h. Statistics
// are f32; the output keeps the input's dtype (Hugging Face's rounding order, see the kernel).
// Tested by tests/nn/test_norm_layer.cpp.
#pragma once

#include <string>
#include <vector>

#include "zerotrain/nn/parameter.h"

namespace zt::nn {

enum class NormKind { rms, layer };

class Norm {
 public:
  Norm(const std::string& prefix, int64_t width, NormKind kind, double eps);

  // x: [N, C] -> [N, C]; keeps x and the statistics for backward.
  Tensor forward(const Tensor& x, Stream stream);
  // The same output without keeping anything (evaluation).
  Tensor apply(const Tensor& x, Stream stream) const;
  // dy: [N, C] -> dx [N, C]; adds the weight (and bias) gradients.
  Tensor backward(const Tensor& dy, Stream stream);
  void release();

  void append_parameters(std::vector<Parameter*>& out);

  Parameter weight;
  Parameter bias;  // LayerNorm only

 private:
  Tensor run(const Tensor& x, Tensor& mean, Tensor& rstd, Stream stream) const;

  NormKind kind_;
  float eps_;
  Tensor x_;     // [N, C] compute dtype: the input
  Tensor mean_;  // [N] f32 (LayerNorm only)
  Tensor rstd_;  // [N] f32
};

}  // namespace zt::nn
