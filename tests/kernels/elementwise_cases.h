// The elementwise ops as one table, shared by test_elementwise.cpp (CPU against float64
// references) and test_elementwise_cuda.cpp (CUDA against CPU): how to run each op through the
// public front-end, its float64 reference at one element, and the input range that exercises it.
#pragma once

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "zerotrain/core/tensor.h"
#include "zerotrain/kernels/elementwise.h"

namespace zt::test {

struct ElementwiseCase {
  std::string name;
  int n_in, n_out;
  float lo, hi;  // inputs are uniform in [lo, hi)
  // Runs the op on `in`, writing `out` (every tensor of one shape, dtype and device).
  std::function<void(const std::vector<Tensor>& in, std::vector<Tensor>& out, Stream s)> run;
  // The op at one element, in float64.
  std::function<void(const double* in, double* out)> ref;
};

namespace ref {
inline constexpr double kK0 = 0.79788456080286535588;  // sqrt(2/pi)
inline constexpr double kK1 = 0.044715;
inline double gelu(double x) {
  return 0.5 * x * (1 + std::tanh(kK0 * (x + kK1 * x * x * x)));
}
inline double gelu_grad(double x) {
  const double t = std::tanh(kK0 * (x + kK1 * x * x * x));
  return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * kK0 * (1 + 3 * kK1 * x * x);
}
inline double sigmoid(double x) {
  return 1 / (1 + std::exp(-x));
}
inline double silu(double x) {
  return x * sigmoid(x);
}
inline double silu_grad(double x) {
  return sigmoid(x) * (1 + x * (1 - sigmoid(x)));
}
}  // namespace ref

inline const std::vector<ElementwiseCase>& elementwise_cases() {
  using In = const std::vector<Tensor>&;
  using Out = std::vector<Tensor>&;
  static const std::vector<ElementwiseCase> cases = {
      {"add", 2, 1, -2, 2, [](In i, Out o, Stream s) { kernels::add(i[0], i[1], o[0], 1.0f, s); },
       [](const double* x, double* y) { y[0] = x[0] + x[1]; }},
      {"add_alpha", 2, 1, -2, 2,
       [](In i, Out o, Stream s) { kernels::add(i[0], i[1], o[0], -0.75f, s); },
       [](const double* x, double* y) { y[0] = x[0] - 0.75 * x[1]; }},
      {"mul", 2, 1, -2, 2, [](In i, Out o, Stream s) { kernels::mul(i[0], i[1], o[0], s); },
       [](const double* x, double* y) { y[0] = x[0] * x[1]; }},
      {"scale", 1, 1, -2, 2, [](In i, Out o, Stream s) { kernels::scale(i[0], 1.5f, o[0], s); },
       [](const double* x, double* y) { y[0] = 1.5 * x[0]; }},
      {"gelu_tanh_forward", 1, 1, -5, 5,
       [](In i, Out o, Stream s) { kernels::gelu_tanh_forward(i[0], o[0], s); },
       [](const double* x, double* y) { y[0] = ref::gelu(x[0]); }},
      {"gelu_tanh_backward", 2, 1, -5, 5,
       [](In i, Out o, Stream s) { kernels::gelu_tanh_backward(i[0], i[1], o[0], s); },
       [](const double* x, double* y) { y[0] = x[1] * ref::gelu_grad(x[0]); }},
      {"silu_forward", 1, 1, -8, 8,
       [](In i, Out o, Stream s) { kernels::silu_forward(i[0], o[0], s); },
       [](const double* x, double* y) { y[0] = ref::silu(x[0]); }},
      {"silu_backward", 2, 1, -8, 8,
       [](In i, Out o, Stream s) { kernels::silu_backward(i[0], i[1], o[0], s); },
       [](const double* x, double* y) { y[0] = x[1] * ref::silu_grad(x[0]); }},
      {"swiglu_forward", 2, 1, -4, 4,
       [](In i, Out o, Stream s) { kernels::swiglu_forward(i[0], i[1], o[0], s); },
       [](const double* x, double* y) { y[0] = ref::silu(x[0]) * x[1]; }},
      {"swiglu_backward", 3, 2, -4, 4,
       [](In i, Out o, Stream s) { kernels::swiglu_backward(i[0], i[1], i[2], o[0], o[1], s); },
       [](const double* x, double* y) {
         y[0] = x[2] * x[1] * ref::silu_grad(x[0]);
         y[1] = x[2] * ref::silu(x[0]);
       }},
  };
  return cases;
}

}  // namespace zt::test
