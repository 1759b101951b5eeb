// Rotary position embedding for the llama family: the inverse frequencies (rope_theta, and the
// Llama-3 "rope_scaling" applied to them as Hugging Face's _compute_llama3_parameters does, in
// f32), and the per-device position/frequency tables the RoPE kernels read.
// Tested by tests/nn/test_rotary.cpp.
#pragma once

#include <cstdint>
#include <vector>

#include "zerotrain/core/tensor.h"
#include "zerotrain/nn/model_config.h"

namespace zt::nn {

// Llama-3 scaling of f32 inverse frequencies: wavelengths above original/low_freq_factor are
// divided by `factor`, those below original/high_freq_factor kept, those between interpolated.
void apply_llama3_rope_scaling(std::vector<float>& inv_freq, const RopeScaling& scaling);

// f32 [head_dim / 2] on the host: 1 / theta^(2i / D), Llama-3-scaled when scaling.factor != 0.
Tensor rope_inv_freq_for(const ModelConfig& config);

class Rotary {
 public:
  explicit Rotary(const ModelConfig& config);

  // Rotates x: [B, S, H, D] in place, or its gradient back. position_ids: i32 [B, S] on x's device
  // (packed rows, [Note: packed documents] in nn/row_documents.h), or empty for 0..S-1 in every
  // row.
  void forward(Tensor& x, const Tensor& position_ids, Stream stream);
  void backward(Tensor& dx, const Tensor& position_ids, Stream stream);

 private:
  void prepare(const Tensor& x, Stream stream);

  Tensor host_inv_freq_;  // [D/2] f32 on the host
  Tensor inv_freq_;       // [D/2] f32 on the activations' device
  Tensor positions_;      // [S] i32 on that device: 0..S-1
};

}  // namespace zt::nn
