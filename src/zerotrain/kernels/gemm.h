// Matrix multiply: C = alpha * op(A) @ op(B) + beta * C (+ bias broadcast over rows).
// CPU: OpenBLAS sgemm (bf16/f16 inputs converted to f32 first). CUDA: cuBLASLt with fp32
// accumulation and the bias epilogue.
#pragma once

#include "zerotrain/core/tensor.h"

namespace zt::kernels {

struct GemmOptions {
  bool trans_a = false;  // A is stored [K, M] and used transposed
  bool trans_b = false;  // B is stored [N, K] and used transposed (the nn.Linear weight layout)
  float alpha = 1.0f;
  float beta = 0.0f;             // 0: C is overwritten (its old contents may be garbage, even NaN)
  const Tensor* bias = nullptr;  // [N], same dtype as C; added after alpha/beta
};

// a: [M, K] (or [K, M] with trans_a), b: [K, N] (or [N, K] with trans_b), c: [M, N].
// All row-major and contiguous, on one device. a and b share a dtype (f32, f16 or bf16); c is
// either that dtype or f32. Accumulation is always f32.
void gemm(const Tensor& a, const Tensor& b, Tensor& c, const GemmOptions& opt = {},
          Stream stream = {});

}  // namespace zt::kernels
