// Softmax cross-entropy over a large vocabulary, fused: each row's log-sum-exp is computed online
// (one pass over the logits in their own dtype), so no f32 copy of the [N, V] logits ever exists.
#pragma once

#include "zerotrain/core/tensor.h"

namespace zt::kernels {

// logits: [N, V] (f32, f16, bf16); targets: i32/i64 [N]; rows whose target == ignore_index get
// loss 0, lse 0 and zero gradient. losses, lse: f32 [N]. A target outside [0, V) that is not
// ignore_index throws ValueError on the CPU; on CUDA (no host sync) its row's loss and gradient
// become NaN.
void cross_entropy_forward(const Tensor& logits, const Tensor& targets, Tensor& losses, Tensor& lse,
                           int64_t ignore_index = -100, Stream stream = {});

// dlogits = grad_scale * (softmax(logits) - onehot(target)), same shape/dtype as logits; it may
// alias logits (in-place). grad_scale is d(total loss)/d(row loss), e.g. 1/valid_tokens for a mean.
void cross_entropy_backward(const Tensor& logits, const Tensor& targets, const Tensor& lse,
                            Tensor& dlogits, float grad_scale, int64_t ignore_index = -100,
                            Stream stream = {});

// Forward and backward in one call: losses f32 [N], and `logits` overwritten by its gradient.
void cross_entropy_fused(Tensor& logits, const Tensor& targets, Tensor& losses, float grad_scale,
                         int64_t ignore_index = -100, Stream stream = {});

}  // namespace zt::kernels
