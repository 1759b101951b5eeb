// Llama-family MLP: down_proj(silu(gate_proj(x)) * up_proj(x)) ("<prefix>.gate_proj/up_proj/
// down_proj", nn.Linear layout, biases with llama's mlp_bias). Keeps gate and up; the SwiGLU
// product is recomputed in backward rather than stored. Tested by tests/nn/test_mlp.cpp.
#pragma once

#include <string>

#include "zerotrain/nn/architecture.h"
#include "zerotrain/nn/linear.h"
#include "zerotrain/nn/sublayer.h"

namespace zt::nn {

class GatedMlp : public Sublayer {
 public:
  GatedMlp(const std::string& prefix, const ModelConfig& config, const Architecture& arch);

  Tensor forward(const Tensor& x, TokenDims dims, Stream stream) override;
  Tensor backward(const Tensor& dy, Stream stream) override;
  void release() override;
  void append_parameters(std::vector<Parameter*>& out) override;

  // Keeps silu(gate) * up for down_proj's weight gradient; skips down_proj.
  void recompute(const Tensor& x, TokenDims dims, Stream stream) override;

  Linear gate_proj, up_proj, down_proj;

 private:
  // Saves x, gate and up; returns silu(gate) * up.
  Tensor swiglu_saving_inputs(const Tensor& x, Stream stream);

  Tensor x_;     // [N, C] compute dtype: the input
  Tensor gate_;  // [N, I] compute dtype: gate_proj(x)
  Tensor up_;    // [N, I] compute dtype: up_proj(x)
  Tensor h_;     // [N, I] silu(gate) * up, kept only by recompute (else computed in backward)
};

}  // namespace zt::nn
