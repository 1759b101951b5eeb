// AdamW on flat buffers, PyTorch torch.optim.AdamW semantics:
//   p -= lr * weight_decay * p                          (decoupled weight decay)
//   m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2
//   p -= (lr / (1 - beta1^t)) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
// with g = grad * grad_scale (unscaling and clipping folded in). Math in f32.
#pragma once

#include "zerotrain/core/tensor.h"

namespace zt::kernels {

struct AdamWParams {
  float lr = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
  float weight_decay = 0.0f;
  int64_t step = 1;  // 1-based step count t, already incremented for this update
  bool bias_correction = true;
  float grad_scale = 1.0f;
};

// param: [n] f32 masters (or f16/bf16 in low-precision mode), updated in place;
// grad: [n] f32/f16/bf16; m, v: [n], f32 or param's dtype; all contiguous, one device.
// param_copy (optional, may be null): [n] f16/bf16, receives the updated params in the same pass.
void adamw_step(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const AdamWParams& p,
                Tensor* param_copy = nullptr, Stream stream = {});

}  // namespace zt::kernels
