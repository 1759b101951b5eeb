// CUDA causal grouped-query attention (layouts in kernels/attention.h). Plain C++ declarations for
// the front-end; options arrive resolved (scale set, window 0 or < S) and D is one of
// 32, 64, 80, 96, 128. f16/bf16 run FlashAttention-2 style tensor-core kernels
// (attention_fwd.cu, attention_bwd_*.cu); f32 runs a CUDA-core path (attention_f32.cu).
// All kernels are deterministic (no float atomics). Tested by
// tests/kernels/test_attention_cuda.cpp.
#pragma once

#include "zerotrain/core/tensor.h"
#include "zerotrain/kernels/attention.h"

namespace zt::kernels::cuda {

void attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, Tensor& out, Tensor& lse,
                       const AttentionOptions& opt, Stream stream);

void attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                        const Tensor& lse, const Tensor& dout, Tensor& dq, Tensor& dk, Tensor& dv,
                        const AttentionOptions& opt, Stream stream);

}  // namespace zt::kernels::cuda
