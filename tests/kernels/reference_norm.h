// Float64 references for RMSNorm and LayerNorm (forward and backward), written naively from the
// definitions in kernels/norm.h. Shared by test_norm.cpp and test_norm_cuda.cpp.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace zt::test {

struct NormForwardRef {
  std::vector<double> y, mean, rstd;
};

struct NormBackwardRef {
  std::vector<double> dx, dw, db;
};

// x: [n, c] row-major; w, b: [c] (b empty: no bias; rms: RMSNorm, otherwise LayerNorm).
inline NormForwardRef norm_forward_ref(bool rms, const std::vector<double>& x,
                                       const std::vector<double>& w, const std::vector<double>& b,
                                       int64_t n, int64_t c, double eps) {
  NormForwardRef r;
  r.y.resize(static_cast<size_t>(n * c));
  for (int64_t i = 0; i < n; ++i) {
    const double* xr = &x[static_cast<size_t>(i * c)];
    double mean = 0;
    if (!rms) {
      for (int64_t j = 0; j < c; ++j)
        mean += xr[j];
      mean /= static_cast<double>(c);
    }
    double var = 0;
    for (int64_t j = 0; j < c; ++j)
      var += (xr[j] - mean) * (xr[j] - mean);
    var /= static_cast<double>(c);
    const double rstd = 1.0 / std::sqrt(var + eps);
    r.mean.push_back(mean);
    r.rstd.push_back(rstd);
    for (int64_t j = 0; j < c; ++j) {
      const size_t k = static_cast<size_t>(j);
      r.y[static_cast<size_t>(i * c + j)] = (xr[j] - mean) * rstd * w[k] + (b.empty() ? 0.0 : b[k]);
    }
  }
  return r;
}

// Gradients of sum(dy * y) with respect to x, w and b, from the chain rule through mean and rstd
// (no closed-form shortcut).
inline NormBackwardRef norm_backward_ref(bool rms, const std::vector<double>& x,
                                         const std::vector<double>& w,
                                         const std::vector<double>& dy, int64_t n, int64_t c,
                                         double eps) {
  NormBackwardRef g;
  g.dx.assign(static_cast<size_t>(n * c), 0.0);
  g.dw.assign(static_cast<size_t>(c), 0.0);
  g.db.assign(static_cast<size_t>(c), 0.0);
  const double cc = static_cast<double>(c);
  for (int64_t i = 0; i < n; ++i) {
    const size_t o = static_cast<size_t>(i * c);
    double mean = 0;
    if (!rms) {
      for (int64_t j = 0; j < c; ++j)
        mean += x[o + j];
      mean /= cc;
    }
    double var = 0;
    for (int64_t j = 0; j < c; ++j)
      var += (x[o + j] - mean) * (x[o + j] - mean);
    var /= cc;
    const double rstd = 1.0 / std::sqrt(var + eps);
    // y_j = (x_j - mean) * rstd * w_j + b_j. With d_j = x_j - mean and gy_j = dy_j * w_j:
    // dL/drstd = sum gy_j d_j; dL/dvar = dL/drstd * -0.5 rstd^3; dL/dd_j = gy_j rstd + dL/dvar 2
    // d_j / c; dL/dx_j = dL/dd_j - (rms ? 0 : mean over k of dL/dd_k).
    double drstd = 0;
    for (int64_t j = 0; j < c; ++j)
      drstd += dy[o + j] * w[static_cast<size_t>(j)] * (x[o + j] - mean);
    const double dvar = drstd * -0.5 * rstd * rstd * rstd;
    std::vector<double> dd(static_cast<size_t>(c));
    double dd_mean = 0;
    for (int64_t j = 0; j < c; ++j) {
      const size_t k = static_cast<size_t>(j);
      dd[k] = dy[o + j] * w[k] * rstd + dvar * 2.0 * (x[o + j] - mean) / cc;
      dd_mean += dd[k] / cc;
    }
    for (int64_t j = 0; j < c; ++j) {
      const size_t k = static_cast<size_t>(j);
      g.dx[o + j] = dd[k] - (rms ? 0.0 : dd_mean);
      g.dw[k] += dy[o + j] * (x[o + j] - mean) * rstd;
      g.db[k] += dy[o + j];
    }
  }
  return g;
}

}  // namespace zt::test
