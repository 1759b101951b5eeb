// CUDA RMSNorm and LayerNorm (kernels/cuda/norm_forward.cu, norm_backward.cu). Plain C++ header;
// arguments are validated by the front-end (kernels/norm.cpp). Tested by
// tests/kernels/test_norm_cuda.cpp.
#pragma once

#include "zerotrain/core/tensor.h"

namespace zt::kernels::cuda {

void rmsnorm_forward(const Tensor& x, const Tensor& w, Tensor& y, Tensor& rstd, float eps,
                     Stream stream);
void rmsnorm_backward(const Tensor& x, const Tensor& w, const Tensor& rstd, const Tensor& dy,
                      Tensor& dx, Tensor& dw, bool accumulate, Stream stream);

// b and db may be undefined (a LayerNorm without bias).
void layernorm_forward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y, Tensor& mean,
                       Tensor& rstd, float eps, Stream stream);
void layernorm_backward(const Tensor& x, const Tensor& w, const Tensor& mean, const Tensor& rstd,
                        const Tensor& dy, Tensor& dx, Tensor& dw, Tensor& db, bool accumulate,
                        Stream stream);

}  // namespace zt::kernels::cuda
