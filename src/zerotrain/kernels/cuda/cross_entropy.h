// CUDA softmax cross-entropy (see kernels/cross_entropy.h for the contract). Arguments are already
// checked by the front-end. Tested by tests/kernels/test_cross_entropy_cuda.cpp.
//
// Target values are never read back to the host (that would synchronize the stream): a row whose
// target is outside [0, V) and not ignore_index gets loss NaN, and its whole gradient row is NaN,
// so the error shows up in the loss and in any overflow check on the gradients. Ignored rows get
// loss 0, lse 0 and a zero gradient, as on the CPU.
#pragma once

#include "zerotrain/core/stream.h"
#include "zerotrain/core/tensor.h"

namespace zt::kernels::cuda {

void cross_entropy_forward(const Tensor& logits, const Tensor& targets, Tensor& losses, Tensor& lse,
                           int64_t ignore_index, Stream stream);
void cross_entropy_backward(const Tensor& logits, const Tensor& targets, const Tensor& lse,
                            Tensor& dlogits, float grad_scale, int64_t ignore_index, Stream stream);
void cross_entropy_fused(Tensor& logits, const Tensor& targets, Tensor& losses, float grad_scale,
                         int64_t ignore_index, Stream stream);

}  // namespace zt::kernels::cuda
