// Token embedding lookup and its gradient.
#pragma once

#include "zerotrain/core/tensor.h"

namespace zt::kernels {

// ids: i32/i64 [N]; table: [V, C] (f32, f16, bf16); out: [N, C] same dtype as table.
// An id outside [0, V) throws ValueError naming it. On CPU the check is free; on CUDA the kernel
// raises a device-side flag and, with check_ids, the front-end synchronizes the stream to read it
// (pass false on hot paths whose ids were validated when the data was loaded; bad rows are then
// zero-filled, never read out of bounds).
void embedding_forward(const Tensor& ids, const Tensor& table, Tensor& out, bool check_ids = true,
                       Stream stream = {});

// dtable [V, C] (f32 or the table dtype) += scatter of dout [N, C] by ids. Deterministic: rows
// that share an id are summed in token order (exact grouping: kernels/embedding_order.h). An id
// outside [0, V) throws ValueError on the CPU; the CUDA kernel skips its row (never syncs).
void embedding_backward(const Tensor& ids, const Tensor& dout, Tensor& dtable, Stream stream = {});

}  // namespace zt::kernels
