// CPU softmax cross-entropy: one row per OpenMP iteration, each row computed sequentially by one
// thread, so results do not depend on the thread count. The row's log-sum-exp is computed online
// over fixed chunks (chunk max, rescale the running sum, add the chunk's exponentials in 16 fixed
// lanes), reading the logits once in their own dtype. Tested by
// tests/kernels/test_cross_entropy.cpp.
#include "zerotrain/kernels/cpu/cross_entropy.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace zt::kernels::cpu {

namespace {

constexpr int64_t kChunk = 1024;
constexpr int kLanes = 16;
constexpr int64_t kMinParallel = int64_t{1} << 15;  // elements; below this one thread is faster
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

template <typename T>
inline float to_f32(T x) {
  return static_cast<float>(x);
}

// log(sum_i exp(x[i])) over one row of V >= 1 logits. NaN logits give NaN.
template <typename T>
float row_logsumexp(const T* x, int64_t V) {
  float m = kNegInf, s = 0.f;
  float buf[kChunk];
  for (int64_t c0 = 0; c0 < V; c0 += kChunk) {
    const int64_t len = std::min(kChunk, V - c0);
    float cm = kNegInf;
    for (int64_t i = 0; i < len; ++i) {
      buf[i] = to_f32(x[c0 + i]);
      cm = buf[i] > cm ? buf[i] : cm;
    }
    if (cm == kNegInf) {  // only -inf (or NaN) here: NaN must still reach the sum
      bool has_nan = false;
      for (int64_t i = 0; i < len; ++i)
        has_nan |= std::isnan(buf[i]);
      if (has_nan) s = std::numeric_limits<float>::quiet_NaN();
      continue;
    }
    if (cm > m) {
      s *= std::exp(m - cm);
      m = cm;
    }
    float acc[kLanes] = {};
    for (int64_t i = 0; i < len; ++i)
      acc[i % kLanes] += std::exp(buf[i] - m);
    for (int k = 0; k < kLanes; ++k)
      s += acc[k];
  }
  return m + std::log(s);
}

// d[i] = grad_scale * (exp(x[i] - lse) - [i == t]) for one row; d may alias x.
template <typename T>
void row_gradient(const T* x, T* d, int64_t V, int64_t t, float lse, float grad_scale) {
  const float xt = to_f32(x[t]);  // read before d (possibly x itself) is written
  for (int64_t i = 0; i < V; ++i)
    d[i] = T(grad_scale * std::exp(to_f32(x[i]) - lse));
  d[t] = T(grad_scale * (std::exp(xt - lse) - 1.f));
}

template <typename T>
void row_zero(T* d, int64_t V) {
  std::fill(d, d + V, T(0.f));
}

// Throws ValueError naming the first row whose target is outside [0, V) and not ignore_index.
template <typename I>
void check_target_values(std::string_view op, const I* targets, int64_t N, int64_t V,
                         int64_t ignore_index) {
  for (int64_t n = 0; n < N; ++n) {
    const int64_t t = static_cast<int64_t>(targets[n]);
    if (t != ignore_index && (t < 0 || t >= V))
      throw ValueError(op, str("targets[", n, "] = ", t, " is out of range for ", V,
                               " classes (ignore_index ", ignore_index, ")"));
  }
}

template <typename T, typename I>
void forward_impl(const Tensor& logits, const Tensor& targets, Tensor& losses, Tensor& lse,
                  int64_t ignore_index) {
  const int64_t N = logits.size(0), V = logits.size(1);
  const T* x = logits.data_as<T>();
  const I* tg = targets.data_as<I>();
  float* loss = losses.data_as<float>();
  float* lse_out = lse.data_as<float>();
  check_target_values("cross_entropy_forward", tg, N, V, ignore_index);
#pragma omp parallel for schedule(static) if (N * V >= kMinParallel)
  for (int64_t n = 0; n < N; ++n) {
    const int64_t t = static_cast<int64_t>(tg[n]);
    if (t == ignore_index) {
      loss[n] = 0.f;
      lse_out[n] = 0.f;
      continue;
    }
    const T* row = x + n * V;
    const float l = row_logsumexp(row, V);
    lse_out[n] = l;
    loss[n] = l - to_f32(row[t]);
  }
}

template <typename T, typename I>
void backward_impl(const Tensor& logits, const Tensor& targets, const Tensor& lse, Tensor& dlogits,
                   float grad_scale, int64_t ignore_index) {
  const int64_t N = logits.size(0), V = logits.size(1);
  const T* x = logits.data_as<T>();
  T* d = dlogits.data_as<T>();
  const I* tg = targets.data_as<I>();
  const float* l = lse.data_as<float>();
  check_target_values("cross_entropy_backward", tg, N, V, ignore_index);
#pragma omp parallel for schedule(static) if (N * V >= kMinParallel)
  for (int64_t n = 0; n < N; ++n) {
    const int64_t t = static_cast<int64_t>(tg[n]);
    if (t == ignore_index)
      row_zero(d + n * V, V);
    else
      row_gradient(x + n * V, d + n * V, V, t, l[n], grad_scale);
  }
}

template <typename T, typename I>
void fused_impl(Tensor& logits, const Tensor& targets, Tensor& losses, float grad_scale,
                int64_t ignore_index) {
  const int64_t N = logits.size(0), V = logits.size(1);
  T* x = logits.data_as<T>();
  const I* tg = targets.data_as<I>();
  float* loss = losses.data_as<float>();
  check_target_values("cross_entropy_fused", tg, N, V, ignore_index);
#pragma omp parallel for schedule(static) if (N * V >= kMinParallel)
  for (int64_t n = 0; n < N; ++n) {
    const int64_t t = static_cast<int64_t>(tg[n]);
    T* row = x + n * V;
    if (t == ignore_index) {
      loss[n] = 0.f;
      row_zero(row, V);
      continue;
    }
    const float l = row_logsumexp(row, V);
    loss[n] = l - to_f32(row[t]);
    row_gradient(row, row, V, t, l, grad_scale);
  }
}

// Calls f.template operator()<T, I>() for the logits' and targets' dtypes.
template <typename F>
void dispatch(DType logits, DType targets, F&& f) {
  auto with_index = [&]<typename T>() {
    if (targets == DType::i32)
      f.template operator()<T, int32_t>();
    else
      f.template operator()<T, int64_t>();
  };
  switch (logits) {
    case DType::f32:
      with_index.template operator()<float>();
      break;
    case DType::f16:
      with_index.template operator()<f16>();
      break;
    case DType::bf16:
      with_index.template operator()<bf16>();
      break;
    default:
      throw DTypeError("cross_entropy", str("unsupported dtype ", dtype_name(logits)));
  }
}

}  // namespace

void cross_entropy_forward(const Tensor& logits, const Tensor& targets, Tensor& losses, Tensor& lse,
                           int64_t ignore_index) {
  dispatch(logits.dtype(), targets.dtype(), [&]<typename T, typename I>() {
    forward_impl<T, I>(logits, targets, losses, lse, ignore_index);
  });
}

void cross_entropy_backward(const Tensor& logits, const Tensor& targets, const Tensor& lse,
                            Tensor& dlogits, float grad_scale, int64_t ignore_index) {
  dispatch(logits.dtype(), targets.dtype(), [&]<typename T, typename I>() {
    backward_impl<T, I>(logits, targets, lse, dlogits, grad_scale, ignore_index);
  });
}

void cross_entropy_fused(Tensor& logits, const Tensor& targets, Tensor& losses, float grad_scale,
                         int64_t ignore_index) {
  dispatch(logits.dtype(), targets.dtype(), [&]<typename T, typename I>() {
    fused_impl<T, I>(logits, targets, losses, grad_scale, ignore_index);
  });
}

}  // namespace zt::kernels::cpu
