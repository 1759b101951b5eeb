// CUDA causal grouped-query attention (layouts in kernels/attention.h). Plain C++ declarations for
// the front-end; options arrive resolved (scale set, window 0 or < S) and D is one of
// 32, 64, 80, 96, 128. attention_forward/backward run cuDNN's fused flash attention or our kernels
// as ZT_ATTENTION and the case decide (attention_select.h). Ours: f16/bf16 run FlashAttention-2
// style tensor-core kernels (attention_fwd.cu, attention_bwd_*.cu); f32 runs a CUDA-core path
// (attention_f32.cu). Every path is deterministic. Tested by tests/kernels/test_attention_cuda.cpp
// and tests/kernels/test_attention_cudnn.cpp.
#pragma once

#include "zerotrain/core/tensor.h"
#include "zerotrain/kernels/attention.h"

namespace zt::kernels::cuda {

void attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, Tensor& out, Tensor& lse,
                       const AttentionOptions& opt, Stream stream);

void attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                        const Tensor& lse, const Tensor& dout, Tensor& dq, Tensor& dk, Tensor& dv,
                        const AttentionOptions& opt, Stream stream);

// "cudnn" or "native": the path attention_forward/backward take for this case.
const char* attention_backend_name(const Tensor& q, const Tensor& k, const AttentionOptions& opt,
                                   AttentionPass pass);

// Our kernels, whatever ZT_ATTENTION says.
void native_attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, Tensor& out,
                              Tensor& lse, const AttentionOptions& opt, Stream stream);
void native_attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                               const Tensor& lse, const Tensor& dout, Tensor& dq, Tensor& dk,
                               Tensor& dv, const AttentionOptions& opt, Stream stream);

}  // namespace zt::kernels::cuda
