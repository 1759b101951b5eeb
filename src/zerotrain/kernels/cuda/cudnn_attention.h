// Causal grouped-query attention through cuDNN's fused flash attention (the SDPA graphs drawn by
// NVIDIA's cudnn-frontend: see [Note: cuDNN attention graphs] in cudnn_attention.cpp). Same
// contract as kernels/attention.h: q [B, S, Hq, D], k, v [B, S, Hkv, D] read where they lie
// (strides, no copies), out like q, lse f32 [B, Hq, S] (cuDNN's softmax Stats: the natural-log
// log-sum-exp of the scaled scores, exactly our kernels' lse, so the two paths are interchangeable
// between forward and backward). The backward is bitwise deterministic.
// Plans are built once per (device, B, S, Hq, Hkv, D, dtype, scale, pass) and cached, a failed
// build with its reason. Plain C++ declarations; cuDNN and the frontend stay inside the .cpp.
// Tested by tests/kernels/test_attention_cudnn.cpp.
#pragma once

#include <string>

#include "zerotrain/core/tensor.h"
#include "zerotrain/kernels/attention.h"

namespace zt::kernels::cuda {

// Why cuDNN cannot take this case before any plan is built (dtype, window, packed rows, head dim,
// alignment, GPU generation, cuDNN version), or "" when it may. `opt` is resolved.
std::string cudnn_attention_unsupported(const Tensor& q, const Tensor& k,
                                        const AttentionOptions& opt);

// The workspace bytes the prepared plan of `pass` asks for at each call (0 without a plan). The
// deterministic backward's holds dP: about B * Hq * S^2 * 2 bytes.
int64_t cudnn_attention_workspace_bytes(const Tensor& q, const Tensor& k,
                                        const AttentionOptions& opt, AttentionPass pass);

// Builds (or finds) the plan of `pass` for this case: "" when cuDNN's heuristics gave an engine
// configuration that builds, otherwise why not (cached: a case fails once).
std::string cudnn_attention_prepare(const Tensor& q, const Tensor& k, const AttentionOptions& opt,
                                    AttentionPass pass);

// Run the cached plan (building it on first use); throw BackendError when it cannot be built.
void cudnn_attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, Tensor& out,
                             Tensor& lse, const AttentionOptions& opt, Stream stream);
void cudnn_attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                              const Tensor& lse, const Tensor& dout, Tensor& dq, Tensor& dk,
                              Tensor& dv, const AttentionOptions& opt, Stream stream);

// cuDNN's version at run time, e.g. 91400; 0 when libcudnn.so.9 cannot be loaded.
int64_t cudnn_runtime_version();

}  // namespace zt::kernels::cuda
