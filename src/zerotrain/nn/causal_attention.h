// The attention core shared by every family: optional RoPE on q and k, then causal grouped-query
// scaled-dot-product attention (optionally within a sliding window) over kernels/attention.h,
// forward and backward. The projections around it live in self_attention.h (llama family) and
// gpt2_attention.h. Tested through tests/nn/test_attention_layer.cpp.
#pragma once

#include <memory>

#include "zerotrain/core/tensor.h"
#include "zerotrain/kernels/attention.h"
#include "zerotrain/nn/rotary.h"

namespace zt::nn {

class CausalAttention {
 public:
  // rotary: null for learned positions (gpt2). window: 0 for full causal attention.
  CausalAttention(std::unique_ptr<Rotary> rotary, int64_t window);

  // q: [B, S, Hq, D], k, v: [B, S, Hkv, D], contiguous; q and k are rotated in place.
  // Returns out [B, S, Hq, D]; keeps q, k, v, out and the log-sum-exp.
  Tensor forward(Tensor q, Tensor k, Tensor v, Stream stream);
  // dout: [B, S, Hq, D]. Writes dq, dk, dv (shapes of q, k, v; the caller places them), rotated
  // back to the un-rotated inputs' gradients.
  void backward(const Tensor& dout, Tensor& dq, Tensor& dk, Tensor& dv, Stream stream);
  void release();

 private:
  std::unique_ptr<Rotary> rotary_;
  kernels::AttentionOptions options_;
  Tensor q_;    // [B, S, Hq, D] compute dtype, after RoPE
  Tensor k_;    // [B, S, Hkv, D] compute dtype, after RoPE
  Tensor v_;    // [B, S, Hkv, D] compute dtype
  Tensor out_;  // [B, S, Hq, D] compute dtype
  Tensor lse_;  // [B, Hq, S] f32
};

}  // namespace zt::nn
