// CPU random normal fill (kernels/random_normal.h), the reference of the CUDA one.
#pragma once

#include <cstdint>

#include "zerotrain/core/tensor.h"

namespace zt::kernels::cpu {

// dst: contiguous, host memory, f32/f16/bf16; elements [first, first + numel) of the stream.
void random_normal(Tensor& dst, uint64_t seed, uint64_t stream_id, int64_t first, float std);

}  // namespace zt::kernels::cpu
