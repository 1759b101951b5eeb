// CPU KV-cache attention (see kernels/cached_attention.h for layouts and semantics), the reference
// of the CUDA kernel. Options arrive resolved (scale > 0). Each (batch, head, query) row is
// computed on its own with the arithmetic of kernels/cpu/attention.cpp's forward (f32 dot products
// over 8 fixed lanes, f64 softmax and accumulators), so a prefill gives attention_forward's output
// bitwise and the result does not depend on the thread count.
#pragma once

#include <cstdint>

#include "zerotrain/core/tensor.h"
#include "zerotrain/kernels/attention.h"

namespace zt::kernels::cpu {

void cached_attention_forward(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache,
                              int64_t past, Tensor& out, const AttentionOptions& opt);

}  // namespace zt::kernels::cpu
