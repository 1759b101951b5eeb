// CPU cast between f32, f16 and bf16 (round to nearest even, as core/half.h).
#pragma once

#include "zerotrain/core/tensor.h"

namespace zt::kernels::cpu {

// src, dst: contiguous, same element count, host memory; any of f32/f16/bf16.
void cast(const Tensor& src, Tensor& dst);

}  // namespace zt::kernels::cpu
