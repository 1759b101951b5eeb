// CUDA random normal fill, bitwise equal to the CPU one (kernels/cpu/random_normal.h).
#pragma once

#include <cstdint>

#include "zerotrain/core/stream.h"
#include "zerotrain/core/tensor.h"

namespace zt::kernels::cuda {

// dst: contiguous, on one GPU, f32/f16/bf16; elements [first, first + numel). Runs on `stream`.
void random_normal(Tensor& dst, uint64_t seed, uint64_t stream_id, int64_t first, float std,
                   Stream stream);

}  // namespace zt::kernels::cuda
