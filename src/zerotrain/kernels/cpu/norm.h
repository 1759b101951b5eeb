// CPU RMSNorm and LayerNorm (forward and backward). Arguments are validated by the front-end
// (kernels/norm.cpp); see kernels/norm.h for the contract. Tested by tests/kernels/test_norm.cpp.
#pragma once

#include "zerotrain/core/tensor.h"

namespace zt::kernels::cpu {

void rmsnorm_forward(const Tensor& x, const Tensor& w, Tensor& y, Tensor& rstd, float eps);
void rmsnorm_backward(const Tensor& x, const Tensor& w, const Tensor& rstd, const Tensor& dy,
                      Tensor& dx, Tensor& dw, bool accumulate);

// b and db may be undefined (a LayerNorm without bias).
void layernorm_forward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y, Tensor& mean,
                       Tensor& rstd, float eps);
void layernorm_backward(const Tensor& x, const Tensor& w, const Tensor& mean, const Tensor& rstd,
                        const Tensor& dy, Tensor& dx, Tensor& dw, Tensor& db, bool accumulate);

}  // namespace zt::kernels::cpu
