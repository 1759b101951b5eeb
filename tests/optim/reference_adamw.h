// Float64 reference of one torch.optim.AdamW step for the optimizer tests
// (tests/optim/test_adam_reference.cpp, tests/optim/test_flat_adam.cpp), written from the
// formulas of torch's single-tensor implementation: decoupled decay first, then the moments, then
// the bias-corrected update with eps added after dividing sqrt(v) by sqrt(1 - beta2^t).
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace zt::test {

// One step's hyper-parameters, as torch.optim.AdamW takes them.
struct AdamWRefParams {
  float lr = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
  float weight_decay = 0.0f;
  int64_t step = 1;  // 1-based
  bool bias_correction = true;
  float grad_scale = 1.0f;
};

struct AdamWState {
  std::vector<double> p, m, v;
};

// torch multiplies f32 tensors by Python floats rounded to f32 (1 - lr*wd, 1 - beta1, beta2,
// 1 - beta2, lr / bc1, sqrt(bc2), eps): the reference takes those scalars rounded the same way and
// does the tensor arithmetic in float64. (Unrounded, the decay factor alone would drift the
// trajectory by ~1e-6 relative over 50 steps.)
inline double as_f32(double x) {
  return static_cast<double>(static_cast<float>(x));
}

inline void adamw_reference_step(AdamWState& s, const std::vector<double>& grad,
                                 const AdamWRefParams& hp) {
  const double lr = hp.lr, b1 = hp.beta1, b2 = hp.beta2, t = static_cast<double>(hp.step);
  const double bc1 = hp.bias_correction ? 1.0 - std::pow(b1, t) : 1.0;
  const double bc2 = hp.bias_correction ? 1.0 - std::pow(b2, t) : 1.0;
  const double decay = as_f32(1.0 - lr * static_cast<double>(hp.weight_decay));
  const double w1 = as_f32(1.0 - b1), w2 = as_f32(1.0 - b2);
  const double step_size = as_f32(lr / bc1), bc2_sqrt = as_f32(std::sqrt(bc2));
  const double eps = hp.eps, scale = hp.grad_scale;
  for (size_t i = 0; i < s.p.size(); ++i) {
    const double g = grad[i] * scale;
    s.p[i] *= decay;
    s.m[i] = b1 * s.m[i] + w1 * g;
    s.v[i] = b2 * s.v[i] + w2 * g * g;
    s.p[i] -= step_size * s.m[i] / (std::sqrt(s.v[i]) / bc2_sqrt + eps);
  }
}

}  // namespace zt::test
