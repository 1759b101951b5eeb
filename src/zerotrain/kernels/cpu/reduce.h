// CPU backend of the reductions (contract: kernels/reduce.h). Arguments arrive validated by the
// front-end (kernels/reduce.cpp). Deterministic for any OpenMP thread count: see
// [Note: deterministic CPU reductions] in reduce.cpp. Tested by tests/kernels/test_reduce.cpp.
#pragma once

#include <vector>

#include "zerotrain/core/tensor.h"

namespace zt::kernels::cpu {

void sum(const Tensor& x, Tensor& out);                               // out: f32 [1]
void max(const Tensor& x, Tensor& out);                               // out: f32 [1]; x non-empty
void sum_rows(const Tensor& x, Tensor& out, bool accumulate);         // x [M, N] -> out [N]
void global_l2_norm(const std::vector<Tensor>& xs, Tensor& out);      // out: f32 [1]
void chunk_sum_squares(const Tensor& x, int64_t chunk, Tensor& out);  // out: f32 [chunks]

}  // namespace zt::kernels::cpu
