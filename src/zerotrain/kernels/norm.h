// RMSNorm and LayerNorm over the last dimension, forward and backward.
// x, y, dy, dx: [N, C] contiguous, same dtype (f32, f16, bf16). Weights/biases: [C], any floating
// dtype. Saved statistics (mean, rstd): f32 [N]. Weight/bias gradients are f32 or the weight's
// dtype; with accumulate they are added to, otherwise overwritten. Deterministic (no float
// atomics).
#pragma once

#include "zerotrain/core/tensor.h"

namespace zt::kernels {

// y = x * rstd * w,  rstd = 1 / sqrt(mean(x^2) + eps)
void rmsnorm_forward(const Tensor& x, const Tensor& w, Tensor& y, Tensor& rstd, float eps,
                     Stream stream = {});
void rmsnorm_backward(const Tensor& x, const Tensor& w, const Tensor& rstd, const Tensor& dy,
                      Tensor& dx, Tensor& dw, bool accumulate = false, Stream stream = {});

// y = (x - mean) * rstd * w + b,  rstd = 1 / sqrt(var(x) + eps) (biased variance). b and db may be
// undefined tensors (a LayerNorm without bias; b's dtype, when given, is w's).
void layernorm_forward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y, Tensor& mean,
                       Tensor& rstd, float eps, Stream stream = {});
void layernorm_backward(const Tensor& x, const Tensor& w, const Tensor& mean, const Tensor& rstd,
                        const Tensor& dy, Tensor& dx, Tensor& dw, Tensor& db,
                        bool accumulate = false, Stream stream = {});

}  // namespace zt::kernels
