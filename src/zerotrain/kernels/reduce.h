// Reductions. Every result is deterministic: the same input gives bitwise the same output on every
// run (fixed reduction order, no floating-point atomics). Accumulation in f32 on GPU; the CPU
// backend accumulates in f64 where that costs nothing.
#pragma once

#include <vector>

#include "zerotrain/core/tensor.h"

namespace zt::kernels {

// out: f32 [1] on x's device.
void sum(const Tensor& x, Tensor& out, Stream stream = {});
void max(const Tensor& x, Tensor& out, Stream stream = {});

// Column sums of a matrix (bias gradients): x [M, N] -> out [N] (f32 or x's dtype).
// accumulate: out += sums instead of out = sums.
void sum_rows(const Tensor& x, Tensor& out, bool accumulate = false, Stream stream = {});

// sqrt(sum over tensors of sum of squares): the global gradient norm for clipping.
// xs: any floating dtypes, any sizes, all on one device; out: f32 [1] on that device.
void global_l2_norm(const std::vector<Tensor>& xs, Tensor& out, Stream stream = {});

// Per-chunk sums of squares: out[k] = sum of x[i]^2 for i in [k * chunk, (k + 1) * chunk) (clipped
// to x), rounded to f32. x: contiguous, floating; out: f32 [ceil(numel / chunk)] on x's device.
// Appending zeros to x leaves every partial bitwise unchanged (the ZeRO norm relies on it, see
// [Note: chunked gradient norm] in zero/grad_norm.h).
void chunk_sum_squares(const Tensor& x, int64_t chunk, Tensor& out, Stream stream = {});

}  // namespace zt::kernels
