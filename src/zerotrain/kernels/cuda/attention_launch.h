// Internal interface between the CUDA attention sources (plain C++): kernel argument blocks and the
// launchers each .cu file provides. Layouts as in kernels/attention.h; window is 0 (full causal) or
// in (0, S); D is one of 32, 64, 80, 96, 128; doc_starts [B, S] i32 of packed rows, or null (every
// kernel then runs exactly as without it).
#pragma once

#include "zerotrain/core/dtype.h"
#include "zerotrain/core/stream.h"

namespace zt::kernels::cuda::attn {

struct FwdArgs {
  const void* q;  // [B, S, Hq, D]
  const void* k;  // [B, S, Hkv, D]
  const void* v;  // [B, S, Hkv, D]
  void* out;      // [B, S, Hq, D]
  float* lse;     // [B, Hq, S] f32
  int B, S, Hq, Hkv, D, window;
  float scale;
  const int* doc_starts;  // [B, S] or null: query i sees no key before doc_starts[b, i]
};

struct BwdArgs {
  const void* q;     // [B, S, Hq, D]
  const void* k;     // [B, S, Hkv, D]
  const void* v;     // [B, S, Hkv, D]
  const void* out;   // [B, S, Hq, D]
  const void* dout;  // [B, S, Hq, D]
  const float* lse;  // [B, Hq, S] f32
  const float* dd;   // [B, Hq, S] f32: rowsum(dout * out), from attention_row_dots
  void* dq;          // [B, S, Hq, D]
  void* dk;          // [B, S, Hkv, D]
  void* dv;          // [B, S, Hkv, D]
  int B, S, Hq, Hkv, D, window;
  float scale;
  const int* doc_starts;  // [B, S] or null: query i sees no key before doc_starts[b, i]
};

// f16 / bf16 tensor-core kernels.
void forward_tensor_core(const FwdArgs& a, DType dtype, Stream stream);  // attention_fwd.cu
void backward_dkdv_tensor_core(const BwdArgs& a, DType dtype,
                               Stream stream);  // attention_bwd_dkdv.cu
void backward_dq_tensor_core(const BwdArgs& a, DType dtype, Stream stream);  // attention_bwd_dq.cu

// f32 CUDA-core kernels (attention_f32.cu).
void forward_f32(const FwdArgs& a, Stream stream);
void backward_f32(const BwdArgs& a, Stream stream);  // dq, dk, dv; needs a.dd

}  // namespace zt::kernels::cuda::attn
