// Float64 GEMM reference and the case grid shared by test_gemm.cpp (CPU) and test_gemm_cuda.cpp.
// A case builds random operands (values rounded to their dtypes), runs kernels::gemm on the given
// device and compares with alpha * op(A) op(B) + beta * C0 + bias computed in double, allowing
//   out_round * (2 |ref| + |beta C0| + |bias|) + 8 * 2^-24 * (sqrt(K) + 1) * sum_k |alpha a b|
// per element: rounding to C's dtype plus f32 accumulation error, scaled by the magnitudes.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "support/test_util.h"
#include "zerotrain/kernels/gemm.h"

namespace zt::test {

struct GemmCase {
  int64_t m = 1, n = 1, k = 1;
  bool trans_a = false, trans_b = false;
  DType ab = DType::f32;
  DType c = DType::f32;
  bool bias = false;
  float alpha = 1.0f, beta = 0.0f;

  std::string name() const {
    return str("M=", m, " N=", n, " K=", k, " trans_a=", trans_a, " trans_b=", trans_b, " a/b ",
               dtype_name(ab), " c ", dtype_name(c), bias ? " bias" : "", " alpha=", alpha,
               " beta=", beta);
  }
};

// Half a unit in the last place, relative: the rounding error of storing into `d`.
inline double unit_roundoff(DType d) {
  switch (d) {
    case DType::f16:
      return std::ldexp(1.0, -11);
    case DType::bf16:
      return std::ldexp(1.0, -8);
    default:
      return std::ldexp(1.0, -24);
  }
}

// Stored operand shapes for a case.
inline Shape a_shape(const GemmCase& g) {
  return g.trans_a ? Shape{g.k, g.m} : Shape{g.m, g.k};
}
inline Shape b_shape(const GemmCase& g) {
  return g.trans_b ? Shape{g.n, g.k} : Shape{g.k, g.n};
}

// Reference rows [row_begin, row_end) of C, with per-element error allowances.
struct GemmReference {
  std::vector<double> value;
  std::vector<double> allowed;
};

inline GemmReference reference_gemm(const GemmCase& g, const std::vector<double>& a,
                                    const std::vector<double>& b, const std::vector<double>& c0,
                                    const std::vector<double>& bias, int64_t row_begin,
                                    int64_t row_end) {
  const double acc_err = 8 * std::ldexp(1.0, -24) * (std::sqrt(static_cast<double>(g.k)) + 1);
  const double out_err = unit_roundoff(g.c);
  GemmReference r;
  for (int64_t i = row_begin; i < row_end; ++i) {
    for (int64_t j = 0; j < g.n; ++j) {
      double sum = 0, mag = 0;
      for (int64_t p = 0; p < g.k; ++p) {
        const double x = g.trans_a ? a[p * g.m + i] : a[i * g.k + p];
        const double y = g.trans_b ? b[j * g.k + p] : b[p * g.n + j];
        sum += x * y;
        mag += std::fabs(x * y);
      }
      const double cterm = g.beta == 0.0f ? 0.0 : g.beta * c0[i * g.n + j];
      const double bterm = g.bias ? bias[j] : 0.0;
      const double ref = g.alpha * sum + cterm + bterm;
      r.value.push_back(ref);
      r.allowed.push_back(out_err * (2 * std::fabs(ref) + std::fabs(cterm) + std::fabs(bterm)) +
                          acc_err * std::fabs(g.alpha) * mag + 1e-30);
    }
  }
  return r;
}

// Expects every element of `got` within its allowance; reports the count and the worst one.
inline void expect_within(const GemmReference& ref, const std::vector<double>& got,
                          const std::string& what) {
  ASSERT_EQ(ref.value.size(), got.size()) << what;
  size_t bad = 0, worst = 0;
  double worst_ratio = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double err = std::fabs(got[i] - ref.value[i]);
    if (!(err <= ref.allowed[i])) {
      ++bad;
      const double ratio = std::isnan(err) ? 1e300 : err / ref.allowed[i];
      if (ratio > worst_ratio) {
        worst_ratio = ratio;
        worst = i;
      }
    }
  }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << got.size()
                     << " elements out of tolerance; worst at " << worst << ": got "
                     << (bad ? got[worst] : 0.0) << ", want " << (bad ? ref.value[worst] : 0.0)
                     << " +- " << (bad ? ref.allowed[worst] : 0.0);
}

// Runs one case on `device` and checks `check_rows` rows of C spread over [0, M) (all when 0)
// against the float64 reference. C starts with random values (beta != 0) or NaN (beta == 0).
inline void check_gemm_case(const GemmCase& g, Device device, uint64_t seed,
                            int64_t check_rows = 0) {
  const std::string what = g.name() + " on " + to_string(device);
  Tensor a = random_tensor(a_shape(g), g.ab, seed, -1.0f, 1.0f, device);
  Tensor b = random_tensor(b_shape(g), g.ab, seed + 1, -1.0f, 1.0f, device);
  Tensor c = random_tensor({g.m, g.n}, g.c, seed + 2, -1.0f, 1.0f, device);
  if (g.beta == 0.0f) c.fill(std::nan(""));
  Tensor bias = random_tensor({g.n}, g.c, seed + 3, -0.5f, 0.5f, device);
  const std::vector<double> c0 = to_doubles(c);

  kernels::GemmOptions opt;
  opt.trans_a = g.trans_a;
  opt.trans_b = g.trans_b;
  opt.alpha = g.alpha;
  opt.beta = g.beta;
  opt.bias = g.bias ? &bias : nullptr;
  kernels::gemm(a, b, c, opt);

  const std::vector<double> av = to_doubles(a), bv = to_doubles(b), biasv = to_doubles(bias);
  const std::vector<double> got = to_doubles(c);
  const int64_t rows = check_rows > 0 && check_rows < g.m ? check_rows : g.m;
  // Sampled rows: evenly spaced, the last row included.
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t i = rows == 1 ? 0 : r * (g.m - 1) / (rows - 1);
    const GemmReference ref = reference_gemm(g, av, bv, c0, biasv, i, i + 1);
    const std::vector<double> row(got.begin() + i * g.n, got.begin() + (i + 1) * g.n);
    expect_within(ref, row, what + " row " + std::to_string(i));
    if (::testing::Test::HasFailure()) return;
  }
}

// Every trans_a x trans_b x c dtype x bias x beta combination for operands of dtype `ab`.
inline std::vector<GemmCase> gemm_grid(DType ab, int64_t m, int64_t n, int64_t k) {
  std::vector<GemmCase> cases;
  std::vector<DType> c_types = {ab};
  if (ab != DType::f32) c_types.push_back(DType::f32);
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (DType ct : c_types)
        for (bool bias : {false, true})
          for (float beta : {0.0f, 0.5f}) {
            GemmCase g;
            g.m = m;
            g.n = n;
            g.k = k;
            g.trans_a = ta;
            g.trans_b = tb;
            g.ab = ab;
            g.c = ct;
            g.bias = bias;
            g.alpha = 0.75f;
            g.beta = beta;
            cases.push_back(g);
          }
  return cases;
}

}  // namespace zt::test
