// Float64 reference of softmax cross-entropy for the kernel tests: log-softmax in double on the
// logits exactly as stored (already rounded to their dtype).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "support/test_util.h"

namespace zt::test {

struct CrossEntropyRef {
  std::vector<double> losses;  // [N]; 0 for ignored rows
  std::vector<double> lse;     // [N]; 0 for ignored rows
  std::vector<double> grad;    // [N, V]: grad_scale * (softmax - onehot); 0 for ignored rows
};

inline CrossEntropyRef cross_entropy_reference(const std::vector<double>& logits,
                                               const std::vector<int64_t>& targets, int64_t V,
                                               int64_t ignore_index, double grad_scale) {
  const int64_t N = static_cast<int64_t>(targets.size());
  CrossEntropyRef r{std::vector<double>(N, 0.0), std::vector<double>(N, 0.0),
                    std::vector<double>(N * V, 0.0)};
  for (int64_t n = 0; n < N; ++n) {
    if (targets[n] == ignore_index) continue;
    const double* x = logits.data() + n * V;
    const double m = *std::max_element(x, x + V);
    double s = 0;
    for (int64_t i = 0; i < V; ++i)
      s += std::exp(x[i] - m);
    const double lse = m + std::log(s);
    r.lse[n] = lse;
    r.losses[n] = lse - x[targets[n]];
    for (int64_t i = 0; i < V; ++i)
      r.grad[n * V + i] = grad_scale * (std::exp(x[i] - lse) - (i == targets[n] ? 1.0 : 0.0));
  }
  return r;
}

// Compares a kernel's gradient with the reference. Every element's softmax part is held to `tol`
// (an lse off by a few ulps scales all probabilities of a row alike, a relative error). The
// target elements, where p - 1 cancels, are held to an absolute bound of a few ulps of lse times
// |grad_scale| instead.
inline void expect_gradient_close(const CrossEntropyRef& ref, const Tensor& got,
                                  const std::vector<int64_t>& targets, int64_t V, double grad_scale,
                                  Tolerance tol, const std::string& what) {
  std::vector<double> ref_rest = ref.grad, got_rest = to_doubles(got);
  std::vector<double> ref_target, got_target;
  double max_lse = 0;
  for (size_t n = 0; n < targets.size(); ++n) {
    if (targets[n] < 0 || targets[n] >= V) continue;
    const size_t i = n * static_cast<size_t>(V) + static_cast<size_t>(targets[n]);
    ref_target.push_back(ref_rest[i]);
    got_target.push_back(got_rest[i]);
    ref_rest[i] = got_rest[i] = 0;
    max_lse = std::max(max_lse, std::fabs(ref.lse[n]));
  }
  expect_close(ref_rest, got_rest, tol, what + " (softmax part)");
  const double lse_ulps = std::fabs(grad_scale) * (max_lse * std::ldexp(1.0, -21) + 1e-7);
  expect_close(ref_target, got_target, {tol.atol + lse_ulps, tol.rtol},
               what + " (target elements)");
}

}  // namespace zt::test
