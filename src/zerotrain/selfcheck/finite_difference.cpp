#include "zerotrain/selfcheck/finite_difference.h"

#include <cmath>

namespace zt::selfcheck {

FdResult directional_check(const std::function<double(const Inputs&)>& loss, const Inputs& x,
                           const std::vector<std::vector<double>>& grads, double h,
                           std::mt19937_64& rng) {
  std::normal_distribution<double> nd(0.0, 1.0);
  std::vector<std::vector<double>> u(x.size());
  double n2 = 0;
  for (size_t k = 0; k < x.size(); ++k) {
    u[k].resize(x[k].size());
    for (auto& z : u[k]) {
      z = nd(rng);
      n2 += z * z;
    }
  }
  const double inv = 1.0 / std::sqrt(n2);
  FdResult r;
  double g2 = 0;
  for (size_t k = 0; k < x.size(); ++k) {
    for (size_t i = 0; i < u[k].size(); ++i) {
      u[k][i] *= inv;
      r.analytic += grads[k][i] * u[k][i];
      g2 += grads[k][i] * grads[k][i];
    }
  }
  auto shifted = [&](double s) {
    Inputs v = x;
    for (size_t k = 0; k < v.size(); ++k)
      for (size_t i = 0; i < v[k].size(); ++i)
        v[k][i] = static_cast<float>(v[k][i] + s * u[k][i]);
    return loss(v);
  };
  r.numeric = (shifted(h) - shifted(-h)) / (2 * h);
  r.error =
      std::fabs(r.analytic - r.numeric) / (std::fabs(r.analytic) + 0.1 * std::sqrt(g2) + 1e-6);
  return r;
}

}  // namespace zt::selfcheck
