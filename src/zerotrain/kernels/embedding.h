// Token embedding lookup and its gradient.
#pragma once

#include "zerotrain/core/tensor.h"

namespace zt::kernels {

// ids: i32/i64 [N]; table: [V, C] (f32, f16, bf16); out: [N, C] same dtype as table.
// An id outside [0, V) throws ValueError naming it (checked on the host for CPU tensors; the CUDA
// kernel checks on the device and the front-end raises the error after the launch).
void embedding_forward(const Tensor& ids, const Tensor& table, Tensor& out, Stream stream = {});

// dtable [V, C] (f32 or the table dtype) += scatter of dout [N, C] by ids. Deterministic: rows
// that share an id are summed in token order.
void embedding_backward(const Tensor& ids, const Tensor& dout, Tensor& dtable, Stream stream = {});

}  // namespace zt::kernels
