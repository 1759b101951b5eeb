// CUDA cast between f32, f16 and bf16, bitwise equal to the CPU cast (kernels/cpu/cast.h).
#pragma once

#include "zerotrain/core/stream.h"
#include "zerotrain/core/tensor.h"

namespace zt::kernels::cuda {

// src, dst: contiguous, same element count, on one GPU; any of f32/f16/bf16. Runs on `stream`.
void cast(const Tensor& src, Tensor& dst, Stream stream);

}  // namespace zt::kernels::cuda
