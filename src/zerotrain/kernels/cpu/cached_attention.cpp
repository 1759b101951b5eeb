// CPU KV-cache attention (see cached_attention.h). Row (b, h, t) at position i = past + t:
// scores s_j = scale q.k_j over the visible keys j in [lo, i], softmax, weighted sum of v_j.
// Tested by tests/kernels/test_cached_attention.cpp.
#include "zerotrain/kernels/cpu/cached_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "zerotrain/kernels/cpu/float_types.h"
#include "zerotrain/kernels/cpu/lane_dot.h"

namespace zt::kernels::cpu {

namespace {

template <typename T>
void to_floats(const T* src, int64_t n, float* dst) {
  for (int64_t i = 0; i < n; ++i)
    dst[i] = static_cast<float>(src[i]);
}

template <typename T>
void run(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache, int64_t past, Tensor& out,
         const AttentionOptions& opt) {
  const int64_t B = q.size(0), S = q.size(1), Hq = q.size(2), D = q.size(3);
  const int64_t L = k_cache.size(1), Hkv = k_cache.size(2), G = Hq / Hkv;
  const double scale = opt.scale;
  const T* qp = static_cast<const T*>(q.data());
  const T* kp = static_cast<const T*>(k_cache.data());
  const T* vp = static_cast<const T*>(v_cache.data());
  T* op = static_cast<T*>(out.data());
#pragma omp parallel
  {
    const auto d = static_cast<size_t>(D);
    std::vector<float> qi(d), kj(d);
    std::vector<double> scores, acc(d);
#pragma omp for collapse(3) schedule(dynamic, 4)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < Hq; ++h)
        for (int64_t t = 0; t < S; ++t) {
          const int64_t i = past + t, g = h / G;
          const int64_t lo = opt.window > 0 ? std::max<int64_t>(0, i - opt.window + 1) : 0;
          to_floats(qp + ((b * S + t) * Hq + h) * D, D, qi.data());
          scores.resize(static_cast<size_t>(i - lo + 1));
          double m = -std::numeric_limits<double>::infinity();
          for (int64_t j = lo; j <= i; ++j) {
            to_floats(kp + ((b * L + j) * Hkv + g) * D, D, kj.data());
            const double s = scale * lane_dot(qi.data(), kj.data(), D);
            scores[static_cast<size_t>(j - lo)] = s;
            m = std::max(m, s);
          }
          std::fill(acc.begin(), acc.end(), 0.0);
          double sum = 0;
          for (int64_t j = lo; j <= i; ++j) {
            const double p = std::exp(scores[static_cast<size_t>(j - lo)] - m);
            sum += p;
            const T* vj = vp + ((b * L + j) * Hkv + g) * D;
            for (int64_t c = 0; c < D; ++c)
              acc[static_cast<size_t>(c)] += p * static_cast<float>(vj[c]);
          }
          T* o = op + ((b * S + t) * Hq + h) * D;
          for (int64_t c = 0; c < D; ++c)
            o[c] = T(static_cast<float>(acc[static_cast<size_t>(c)] / sum));
        }
  }
}

}  // namespace

void cached_attention_forward(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache,
                              int64_t past, Tensor& out, const AttentionOptions& opt) {
  visit_float(q.dtype(), "cached_attention_forward",
              [&](auto tag) { run<decltype(tag)>(q, k_cache, v_cache, past, out, opt); });
}

}  // namespace zt::kernels::cpu
