// Normal random fills from the counter-based generator of kernels/philox.h: any element range of a
// stream (seed, stream id), on the host (all cores) or a GPU, bitwise the same everywhere
// ([Note: counter-based normals]). The seeded init of nn/init.h is built on it.
// Tested by tests/kernels/test_random_normal.cpp and test_random_normal_cuda.cpp.
#pragma once

#include <cstdint>

#include "zerotrain/core/tensor.h"

namespace zt::kernels {

// dst[k] = std x z(first + k), k < dst.numel(), where z(i) is element i of the standard-normal
// stream (seed, stream_id), computed in f32 and rounded to dst's dtype (round to nearest even).
// dst: contiguous, f32/f16/bf16, host or GPU (runs on `stream` there). first >= 0.
void random_normal(Tensor& dst, uint64_t seed, uint64_t stream_id, int64_t first, float std,
                   Stream stream = {});

}  // namespace zt::kernels
