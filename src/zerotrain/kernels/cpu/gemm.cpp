// CPU GEMM: C = alpha * op(A) op(B) + beta * C + bias, row-major, through cblas_sgemm.
// f16/bf16 operands are widened to f32 scratch first; a 16-bit C is computed in f32 scratch and
// rounded once at the end, after the bias. With beta == 0 the old C is never read (it may hold
// NaN). OpenBLAS splits the output, never K, across threads, so results do not depend on thread
// count. Tested by tests/kernels/test_gemm.cpp against a float64 reference.
#include "zerotrain/kernels/cpu/gemm.h"

#include <cblas.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace zt::kernels::cpu {

namespace {

// A host tensor's values as f32: the tensor itself when already f32, otherwise a widened copy.
struct F32View {
  const float* data = nullptr;
  std::vector<float> scratch;
};

void widen(const Tensor& t, float* out) {
  const int64_t n = t.numel();
  const auto* bits = static_cast<const uint16_t*>(t.data());
  if (t.dtype() == DType::bf16) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i)
      out[i] = bf16::to_float(bits[i]);
  } else {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i)
      out[i] = f16::to_float(bits[i]);
  }
}

F32View as_f32(const Tensor& t) {
  F32View v;
  if (t.dtype() == DType::f32) {
    v.data = t.data_as<float>();
  } else {
    v.scratch.resize(static_cast<size_t>(t.numel()));
    widen(t, v.scratch.data());
    v.data = v.scratch.data();
  }
  return v;
}

void narrow(const float* in, Tensor& t) {
  const int64_t n = t.numel();
  auto* bits = static_cast<uint16_t*>(t.data());
  if (t.dtype() == DType::bf16) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i)
      bits[i] = bf16::from_float(in[i]);
  } else {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i)
      bits[i] = f16::from_float(in[i]);
  }
}

// c[M, N] = beta * c (or 0 when beta == 0): the K == 0 product.
void scale(float* c, int64_t count, float beta) {
  if (beta == 0.0f) {
    std::memset(c, 0, static_cast<size_t>(count) * sizeof(float));
    return;
  }
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < count; ++i)
    c[i] *= beta;
}

// c[M, N] += bias[N] broadcast over rows.
void add_bias(float* c, const float* bias, int64_t m, int64_t n) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < m; ++i) {
    float* row = c + i * n;
    for (int64_t j = 0; j < n; ++j)
      row[j] += bias[j];
  }
}

blasint as_blasint(int64_t v, const Tensor& a, const Tensor& b) {
  if (v > std::numeric_limits<blasint>::max())
    throw ValueError("gemm", str("a ", a.describe(), " and b ", b.describe(), ": dimension ", v,
                                 " exceeds the BLAS integer range"));
  return static_cast<blasint>(v < 1 ? 1 : v);
}

}  // namespace

void gemm(const Tensor& a, const Tensor& b, Tensor& c, const GemmOptions& opt) {
  const int64_t m = c.size(0), n = c.size(1);
  const int64_t k = opt.trans_a ? a.size(0) : a.size(1);
  if (m == 0 || n == 0) return;

  // f32 destination: C itself, or scratch holding C's values when beta != 0.
  std::vector<float> c_scratch;
  float* c32 = nullptr;
  if (c.dtype() == DType::f32) {
    c32 = c.data_as<float>();
  } else {
    c_scratch.resize(static_cast<size_t>(c.numel()));
    c32 = c_scratch.data();
    if (opt.beta != 0.0f) widen(c, c32);
  }

  if (k == 0) {
    scale(c32, m * n, opt.beta);
  } else {
    if (opt.beta == 0.0f) std::memset(c32, 0, static_cast<size_t>(m * n) * sizeof(float));
    const F32View a32 = as_f32(a), b32 = as_f32(b);
    cblas_sgemm(CblasRowMajor, opt.trans_a ? CblasTrans : CblasNoTrans,
                opt.trans_b ? CblasTrans : CblasNoTrans, as_blasint(m, a, b), as_blasint(n, a, b),
                as_blasint(k, a, b), opt.alpha, a32.data, as_blasint(a.size(1), a, b), b32.data,
                as_blasint(b.size(1), a, b), opt.beta, c32, as_blasint(n, a, b));
  }

  if (opt.bias) {
    const F32View bias32 = as_f32(*opt.bias);
    add_bias(c32, bias32.data, m, n);
  }
  if (c.dtype() != DType::f32) narrow(c32, c);
}

}  // namespace zt::kernels::cpu
