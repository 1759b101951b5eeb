// Element type conversion between f32, f16 and bf16 (round to nearest even).
#pragma once

#include "zerotrain/core/tensor.h"

namespace zt::kernels {

// src and dst: same number of elements, contiguous, same device; any floating dtypes.
void cast(const Tensor& src, Tensor& dst, Stream stream = {});

// Convenience: a new tensor of `dtype` with src's values (src itself when the dtype matches).
Tensor cast_to(const Tensor& src, DType dtype, Stream stream = {});

}  // namespace zt::kernels
