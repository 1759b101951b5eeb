// CPU AdamW: one pass over the flat buffers in fixed blocks shared out by OpenMP; each element's
// update is independent, so the result does not depend on the thread count. The inner loop is
// plain enough for GCC to vectorize for f32 and bf16 storage, provided the build passes
// -fno-math-errno (otherwise sqrtf keeps a scalar errno path and the loop stays scalar).
// Tested by tests/kernels/test_adamw.cpp.
#include "zerotrain/kernels/cpu/adamw.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

namespace zt::kernels::cpu {

namespace {

constexpr int64_t kBlock = 8192;

struct NoCopy {};

template <typename T>
inline float load(const T* p, int64_t i) {
  return static_cast<float>(p[i]);
}

template <typename T>
inline void store(T* p, int64_t i, float x) {
  p[i] = T(x);
}

// The update documented in cpu/adamw.h, for one element.
inline void update(float& p, float g, float& m, float& v, const AdamWScalars& s) {
  g = g * s.grad_scale;
  p = p * s.decay;
  m = s.beta1 * m + s.one_minus_beta1 * g;
  v = s.beta2 * v + s.one_minus_beta2 * (g * g);
  const float denom = std::sqrt(v) / s.bc2_sqrt + s.eps;
  p = p - s.step_size * (m / denom);
}

template <typename P, typename G, typename S, typename C>
void step_impl(P* __restrict__ param, const G* __restrict__ grad, S* __restrict__ m,
               S* __restrict__ v, C* __restrict__ copy, int64_t n, const AdamWScalars& scalars) {
  const AdamWScalars s = scalars;  // a local copy: the compiler need not fear aliasing
  const int64_t blocks = (n + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static) if (blocks > 1)
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t lo = b * kBlock, hi = std::min(n, lo + kBlock);
    for (int64_t i = lo; i < hi; ++i) {
      float p = load(param, i), mi = load(m, i), vi = load(v, i);
      update(p, load(grad, i), mi, vi, s);
      store(param, i, p);
      store(m, i, mi);
      store(v, i, vi);
      // The copy is the param as stored (in low-precision mode, rounded to P first).
      if constexpr (!std::is_same_v<C, NoCopy>) store(copy, i, static_cast<float>(P(p)));
    }
  }
}

// Calls f.template operator()<T>() for a floating dtype.
template <typename F>
void with_float_type(DType t, F&& f) {
  switch (t) {
    case DType::f32:
      f.template operator()<float>();
      break;
    case DType::f16:
      f.template operator()<f16>();
      break;
    case DType::bf16:
      f.template operator()<bf16>();
      break;
    default:
      throw DTypeError("adamw_step", str("unsupported dtype ", dtype_name(t)));
  }
}

}  // namespace

AdamWScalars adamw_scalars(const AdamWParams& p) {
  const double lr = p.lr, b1 = p.beta1, b2 = p.beta2, t = static_cast<double>(p.step);
  AdamWScalars s{};
  s.decay = static_cast<float>(1.0 - lr * static_cast<double>(p.weight_decay));
  s.beta1 = p.beta1;
  s.beta2 = p.beta2;
  s.one_minus_beta1 = static_cast<float>(1.0 - b1);
  s.one_minus_beta2 = static_cast<float>(1.0 - b2);
  s.step_size = static_cast<float>(p.bias_correction ? lr / (1.0 - std::pow(b1, t)) : lr);
  s.bc2_sqrt = static_cast<float>(p.bias_correction ? std::sqrt(1.0 - std::pow(b2, t)) : 1.0);
  s.eps = p.eps;
  s.grad_scale = p.grad_scale;
  return s;
}

void adamw_step(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const AdamWScalars& s,
                Tensor* param_copy) {
  const int64_t n = param.numel();
  with_float_type(param.dtype(), [&]<typename P>() {
    with_float_type(grad.dtype(), [&]<typename G>() {
      auto run = [&]<typename S>() {
        P* p = static_cast<P*>(param.data());
        const G* g = static_cast<const G*>(grad.data());
        S* ms = static_cast<S*>(m.data());
        S* vs = static_cast<S*>(v.data());
        if (!param_copy)
          step_impl<P, G, S, NoCopy>(p, g, ms, vs, nullptr, n, s);
        else if (param_copy->dtype() == DType::bf16)
          step_impl(p, g, ms, vs, static_cast<bf16*>(param_copy->data()), n, s);
        else
          step_impl(p, g, ms, vs, static_cast<f16*>(param_copy->data()), n, s);
      };
      if constexpr (std::is_same_v<P, float>)
        run.template operator()<float>();
      else if (m.dtype() == DType::f32)
        run.template operator()<float>();
      else
        run.template operator()<P>();
    });
  });
}

}  // namespace zt::kernels::cpu
