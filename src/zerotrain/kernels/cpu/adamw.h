// CPU AdamW (see kernels/adamw.h for the contract), and the per-step scalars that both backends
// use, computed once on the host the way torch.optim.AdamW computes them: in double, then rounded
// to f32 where they meet the f32 tensors. Tested by tests/kernels/test_adamw.cpp.
#pragma once

#include "zerotrain/core/tensor.h"
#include "zerotrain/kernels/adamw.h"

namespace zt::kernels::cpu {

struct AdamWScalars {
  float decay;  // 1 - lr * weight_decay
  float beta1;
  float beta2;
  float one_minus_beta1;
  float one_minus_beta2;
  float step_size;  // lr / (1 - beta1^t), or lr without bias correction
  float bc2_sqrt;   // sqrt(1 - beta2^t), or 1 without bias correction
  float eps;
  float grad_scale;
};

// Assumes p was validated (step >= 1 when bias_correction is on).
AdamWScalars adamw_scalars(const AdamWParams& p);

// Arguments already checked by the front-end. Per element, in f32:
//   g = grad * grad_scale; p *= decay; m = beta1 m + (1 - beta1) g; v = beta2 v + (1 - beta2) g^2;
//   p -= step_size * m / (sqrt(v) / bc2_sqrt + eps)
// m and v are stored in their own dtype; param_copy receives the param as stored, rounded again.
void adamw_step(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const AdamWScalars& s,
                Tensor* param_copy);

}  // namespace zt::kernels::cpu
