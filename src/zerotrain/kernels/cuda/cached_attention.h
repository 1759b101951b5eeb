// CUDA KV-cache attention (kernels/cuda/cached_attention.cu; layouts and semantics in
// kernels/cached_attention.h). Plain C++ declarations for the front-end; options arrive resolved
// (scale set) and D is at most kCachedAttentionMaxHeadDim. Tested by
// tests/kernels/test_cached_attention_cuda.cpp.
#pragma once

#include <cstdint>

#include "zerotrain/core/tensor.h"
#include "zerotrain/kernels/attention.h"

namespace zt::kernels::cuda {

inline constexpr int64_t kCachedAttentionMaxHeadDim = 256;

void cached_attention_forward(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache,
                              int64_t past, Tensor& out, const AttentionOptions& opt,
                              Stream stream);

}  // namespace zt::kernels::cuda
