// CUDA rotary position embedding (kernels/cuda/rope.cu). Plain C++ header; arguments are validated
// by the front-end (kernels/rope.cpp). Tested by tests/kernels/test_rope_cuda.cpp.
#pragma once

#include "zerotrain/core/tensor.h"

namespace zt::kernels::cuda {

// dst = src rotated by +angle (forward) or -angle (backward); dst may alias src.
void rope_rotate(const Tensor& src, const Tensor& positions, const Tensor& inv_freq, Tensor& dst,
                 bool backward, Stream stream);

}  // namespace zt::kernels::cuda
