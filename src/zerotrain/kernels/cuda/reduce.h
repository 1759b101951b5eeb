// CUDA backend of the reductions (contract: kernels/reduce.h), declared without CUDA headers.
// Arguments arrive validated by the front-end; every kernel runs on `stream`. Deterministic: see
// [Note: deterministic CUDA reductions] in reduce.cu. Tested by tests/kernels/test_reduce_cuda.cpp.
#pragma once

#include <vector>

#include "zerotrain/core/stream.h"
#include "zerotrain/core/tensor.h"

namespace zt::kernels::cuda {

void sum(const Tensor& x, Tensor& out, Stream stream);
void max(const Tensor& x, Tensor& out, Stream stream);
void sum_rows(const Tensor& x, Tensor& out, bool accumulate, Stream stream);
void global_l2_norm(const std::vector<Tensor>& xs, Tensor& out, Stream stream);
void chunk_sum_squares(const Tensor& x, int64_t chunk, Tensor& out, Stream stream);

}  // namespace zt::kernels::cuda
