// Grouped-query heads moved between their two widths: K or V repeated from Hkv heads to Hq (each
// kv head to the Hq/Hkv query heads that read it), and per-query-head gradients summed back over
// each group in f32 and rounded once. What the cuDNN attention backward needs to take a grouped
// case as plain multi-head attention ([Note: cuDNN's grouped-query gradients] in
// cudnn_attention.cpp). Tested by tests/kernels/test_head_groups_cuda.cpp.
#pragma once

#include "zerotrain/core/stream.h"
#include "zerotrain/core/tensor.h"

namespace zt::kernels::cuda {

// dst [B, S, Hq, D] = src [B, S, Hkv, D] with query head h reading kv head h / (Hq / Hkv).
// Contiguous f32, f16 or bf16 tensors of one dtype on one device, Hq a multiple of Hkv.
void repeat_kv_heads(const Tensor& src, Tensor& dst, Stream stream);

// dst [B, S, Hkv, D] = the sum over each group of src [B, S, Hq, D]'s heads, accumulated in f32
// in head order and rounded once to dst's dtype. Same requirements as repeat_kv_heads.
void sum_head_groups(const Tensor& src, Tensor& dst, Stream stream);

}  // namespace zt::kernels::cuda
