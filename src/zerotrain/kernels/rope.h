// Rotary position embedding, "rotate half" convention (Hugging Face Llama/Mistral/Qwen2):
// for i < D/2, with a = positions[s] * inv_freq[i] computed in f32,
//   y[i]       = x[i] * cos(a) - x[i + D/2] * sin(a)
//   y[i + D/2] = x[i + D/2] * cos(a) + x[i] * sin(a)
// The backward is the rotation by -a. x, y, dy, dx: [B, S, H, D] contiguous, same dtype (f32, f16,
// bf16), D even; positions: i32/i64 [S] (shared by the batch) or [B, S] (one row each: packed rows,
// whose position ids restart at every document); inv_freq: f32 [D/2] (rope_theta and any
// rope_scaling are folded in by the caller). y may alias x.
#pragma once

#include "zerotrain/core/tensor.h"

namespace zt::kernels {

void rope_forward(const Tensor& x, const Tensor& positions, const Tensor& inv_freq, Tensor& y,
                  Stream stream = {});
void rope_backward(const Tensor& dy, const Tensor& positions, const Tensor& inv_freq, Tensor& dx,
                   Stream stream = {});

// Host helper: inv_freq[i] = 1 / theta^(2i / D), f32 [D/2] on the host.
Tensor rope_inv_freq(int64_t head_dim, double theta);

}  // namespace zt::kernels
