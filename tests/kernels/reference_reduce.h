// float64 references for the reductions, shared by test_reduce.cpp and test_reduce_cuda.cpp.
#pragma once

#include <cmath>
#include <vector>

#include "support/test_util.h"
#include "zerotrain/core/tensor.h"

namespace zt::test {

struct SumRef {
  double sum = 0;      // sum of the values
  double abs_sum = 0;  // sum of their magnitudes: the scale of the rounding error of any order
};

inline SumRef sum_ref(const Tensor& x) {
  SumRef r;
  for (double v : to_doubles(x)) {
    r.sum += v;
    r.abs_sum += std::fabs(v);
  }
  return r;
}

// Column sums of x [M, N] (and their magnitudes), plus `init` when given.
inline std::vector<SumRef> sum_rows_ref(const Tensor& x, const std::vector<double>& init = {}) {
  const int64_t M = x.size(0), N = x.size(1);
  const std::vector<double> v = to_doubles(x);
  std::vector<SumRef> r(static_cast<size_t>(N));
  for (int64_t c = 0; c < N; ++c) {
    if (!init.empty()) r[c] = {init[c], std::fabs(init[c])};
    for (int64_t m = 0; m < M; ++m) {
      r[c].sum += v[m * N + c];
      r[c].abs_sum += std::fabs(v[m * N + c]);
    }
  }
  return r;
}

inline double l2_ref(const std::vector<Tensor>& xs) {
  double s = 0;
  for (const Tensor& t : xs)
    for (double v : to_doubles(t))
      s += v * v;
  return std::sqrt(s);
}

}  // namespace zt::test
