// Causal grouped-query attention of new queries against a KV cache, for generation: the prompt's
// queries at once (prefill), then one query per new token. Forward only. Same semantics as
// kernels/attention.h's forward with the queries placed at positions past .. past + T - 1:
// query t sees key j iff j <= past + t and, with a window W > 0, past + t - W < j. So a prefill
// with past = 0 and T = S gives attention_forward's output. Tested by
// tests/kernels/test_cached_attention.cpp (CPU, against attention_forward) and
// tests/kernels/test_cached_attention_cuda.cpp (CUDA against the CPU kernel).
#pragma once

#include <cstdint>

#include "zerotrain/core/tensor.h"
#include "zerotrain/kernels/attention.h"

namespace zt::kernels {

// q: [B, T, Hq, D], the queries of positions past .. past + T - 1; k_cache, v_cache:
// [B, L, Hkv, D] with Hq % Hkv == 0 and L >= past + T, positions 0 .. past + T - 1 filled (the
// rest is never read); out: [B, T, Hq, D]. All share a dtype (f32, f16, bf16) and a device; CUDA
// supports D <= 256. opt.scale 0 means 1/sqrt(D); opt.window 0 means full causal.
void cached_attention_forward(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache,
                              int64_t past, Tensor& out, const AttentionOptions& opt = {},
                              Stream stream = {});

}  // namespace zt::kernels
