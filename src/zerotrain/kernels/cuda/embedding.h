// CUDA token embedding lookup and gradient (kernels/cuda/embedding_forward.cu,
// embedding_backward.cu). Plain C++ header; arguments are validated by the front-end
// (kernels/embedding.cpp). Tested by tests/kernels/test_embedding_cuda.cpp.
#pragma once

#include "zerotrain/core/tensor.h"

namespace zt::kernels::cuda {

// Rows of ids outside [0, V) are zero-filled. With check_ids, synchronizes the stream and returns
// the first such token (or -1); without, returns -1 and never synchronizes.
int64_t embedding_forward(const Tensor& ids, const Tensor& table, Tensor& out, bool check_ids,
                          Stream stream);
// Follows [Note: embedding gradient order]; tokens whose id is outside [0, V) are skipped.
void embedding_backward(const Tensor& ids, const Tensor& dout, Tensor& dtable, Stream stream);

}  // namespace zt::kernels::cuda
