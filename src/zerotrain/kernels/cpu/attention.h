// CPU causal grouped-query attention (see kernels/attention.h for layouts and semantics). Options
// arrive resolved: scale > 0 set, window 0 (full causal) or 0 < window < S, doc_starts undefined or
// i32 [B, S] on the CPU (its values are checked here: each in [0, position]).
//
// Every output row is computed on its own from O(S) scratch, so the kernels can also compute a
// chosen subset of rows: the *_rows variants check a large GPU run on a sample of its rows without
// paying for the whole CPU computation. Deterministic for any thread count.
#pragma once

#include <vector>

#include "zerotrain/core/tensor.h"
#include "zerotrain/kernels/attention.h"

namespace zt::kernels::cpu {

void attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, Tensor& out, Tensor& lse,
                       const AttentionOptions& opt);

void attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                        const Tensor& lse, const Tensor& dout, Tensor& dq, Tensor& dk, Tensor& dv,
                        const AttentionOptions& opt);

// The forward for query positions `rows` only (each in [0, S)):
// out_rows [B, R, Hq, D] in q's dtype, lse_rows f32 [B, Hq, R]; row r holds query position rows[r].
void attention_forward_rows(const Tensor& q, const Tensor& k, const Tensor& v,
                            const std::vector<int64_t>& rows, Tensor& out_rows, Tensor& lse_rows,
                            const AttentionOptions& opt);

// The backward for query positions `q_rows` (dq_rows [B, Rq, Hq, D]) and key positions `kv_rows`
// (dk_rows, dv_rows [B, Rkv, Hkv, D]), all in q's dtype. out and lse are the full forward results.
void attention_backward_rows(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                             const Tensor& lse, const Tensor& dout,
                             const std::vector<int64_t>& q_rows, Tensor& dq_rows,
                             const std::vector<int64_t>& kv_rows, Tensor& dk_rows, Tensor& dv_rows,
                             const AttentionOptions& opt);

}  // namespace zt::kernels::cpu
