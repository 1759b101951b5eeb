// Causal scaled-dot-product attention with grouped-query heads, forward and backward.
// Memory-efficient: no S x S matrix is stored; the forward saves the log-sum-exp of each query row,
// the backward recomputes probabilities from it (FlashAttention-2 scheme). Packed rows of several
// documents: AttentionOptions::doc_starts bounds each query's keys from below.
#pragma once

#include <string>

#include "zerotrain/core/tensor.h"

namespace zt::kernels {

struct AttentionOptions {
  float scale = 0.0f;  // softmax scale; 0 means 1/sqrt(D)
  int64_t window =
      0;  // 0: full causal. W > 0: query i sees key j iff i - W < j <= i (sliding window)
  // Packed rows: i32 [B, S] on q's device, or undefined. Query i of row b sees no key before
  // doc_starts[b, i] (where its document starts, 0 <= doc_starts[b, i] <= i), in addition to the
  // causal and window bounds. Undefined: every row is one stream, and results are bitwise those of
  // the kernels without it.
  Tensor doc_starts;
};

// q: [B, S, Hq, D]; k, v: [B, S, Hkv, D] with Hq % Hkv == 0 (query head h uses kv head h /
// (Hq/Hkv)); out: [B, S, Hq, D]; lse: f32 [B, Hq, S] (natural-log log-sum-exp of the scaled
// scores). q, k, v, out share a dtype (f32, f16, bf16). CUDA supports D in {32, 64, 80, 96, 128}.
void attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, Tensor& out, Tensor& lse,
                       const AttentionOptions& opt = {}, Stream stream = {});

// dq, dk, dv: shapes and dtype of q, k, v; overwritten.
void attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                        const Tensor& lse, const Tensor& dout, Tensor& dq, Tensor& dk, Tensor& dv,
                        const AttentionOptions& opt = {}, Stream stream = {});

enum class AttentionPass { forward, backward };

// Which implementation runs this case: "cpu", "cudnn" (cuDNN's fused flash attention) or "native"
// (zerotrain's CUDA kernels); on CUDA chosen by ZT_ATTENTION, see kernels/cuda/attention_select.h.
// For a run header or a benchmark line; may build (and cache) the cuDNN plan.
std::string attention_backend_name(const Tensor& q, const Tensor& k,
                                   const AttentionOptions& opt = {},
                                   AttentionPass pass = AttentionPass::forward);

// The implementations attention_forward/backward ran in this process so far, in a fixed order:
// "cudnn", "native", "cpu" joined by " and " ("" before the first call). What a run's summary
// states.
std::string attention_paths_used();

}  // namespace zt::kernels
