// The attention core shared by every family: optional RoPE on q and k, then causal grouped-query
// scaled-dot-product attention (optionally within a sliding window) over kernels/attention.h,
// forward and backward, within each document of packed rows. The projections around it live in
// self_attention.h (llama family) and
// gpt2_attention.h. Tested through tests/nn/test_attention_layer.cpp.
#pragma once

#include <memory>

#include "zerotrain/core/tensor.h"
#include "zerotrain/kernels/attention.h"
#include "zerotrain/nn/rotary.h"
#include "zerotrain/nn/row_documents.h"

namespace zt::nn {

class CausalAttention {
 public:
  // rotary: null for learned positions (gpt2). window: 0 for full causal attention.
  CausalAttention(std::unique_ptr<Rotary> rotary, int64_t window);

  // q: [B, S, Hq, D], k, v: [B, S, Hkv, D], contiguous; q and k are rotated in place. documents:
  // packed rows' document starts and position ids, or empty ([Note: packed documents]).
  // Returns out [B, S, Hq, D]; keeps q, k, v, out, the log-sum-exp and the documents.
  Tensor forward(Tensor q, Tensor k, Tensor v, const RowDocuments& documents, Stream stream);
  // dout: [B, S, Hq, D]. Writes dq, dk, dv (shapes of q, k, v; the caller places them), rotated
  // back to the un-rotated inputs' gradients.
  void backward(const Tensor& dout, Tensor& dq, Tensor& dk, Tensor& dv, Stream stream);
  void release();

 private:
  std::unique_ptr<Rotary> rotary_;
  kernels::AttentionOptions options_;  // doc_starts: the forward's, until release()
  Tensor position_ids_;                // [B, S] i32 of packed rows, or empty
  Tensor q_;    // [B, S, Hq, D] compute dtype, after RoPE
  Tensor k_;    // [B, S, Hkv, D] compute dtype, after RoPE
  Tensor v_;    // [B, S, Hkv, D] compute dtype
  Tensor out_;  // [B, S, Hq, D] compute dtype
  Tensor lse_;  // [B, Hq, S] f32
};

}  // namespace zt::nn
