// CPU softmax cross-entropy (see kernels/cross_entropy.h for the contract). Arguments are already
// checked by the front-end; these functions only check the target values, which needs the data.
// Tested by tests/kernels/test_cross_entropy.cpp.
#pragma once

#include "zerotrain/core/tensor.h"

namespace zt::kernels::cpu {

// A target outside [0, V) that is not ignore_index throws ValueError naming the row and the value,
// before any output is written. Ignored rows get loss 0 and lse 0.
void cross_entropy_forward(const Tensor& logits, const Tensor& targets, Tensor& losses, Tensor& lse,
                           int64_t ignore_index);
void cross_entropy_backward(const Tensor& logits, const Tensor& targets, const Tensor& lse,
                            Tensor& dlogits, float grad_scale, int64_t ignore_index);
// Bitwise equal to cross_entropy_forward followed by cross_entropy_backward.
void cross_entropy_fused(Tensor& logits, const Tensor& targets, Tensor& losses, float grad_scale,
                         int64_t ignore_index);

}  // namespace zt::kernels::cpu
