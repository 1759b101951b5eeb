// Test support for attention: random inputs, and a naive float64 causal grouped-query attention
// that materializes each query row's full probability vector and applies the textbook gradient
// formulas. Layouts as in kernels/attention.h.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "support/test_util.h"

namespace zt::test {

struct AttentionShape {
  int64_t B, S, Hq, Hkv, D;
  double scale;    // resolved (> 0)
  int64_t window;  // 0: full causal
  std::vector<int64_t> doc_starts = {};  // [B, S] of packed rows, or empty
};

struct AttentionRef {
  std::vector<double> out, lse;    // [B, S, Hq, D], [B, Hq, S]
  std::vector<double> dq, dk, dv;  // filled when a cotangent is given
};

// Random inputs (host), rounded to the dtype, with the matching reference shape (default scale).
struct AttentionInputs {
  AttentionShape shape;
  Tensor q, k, v, dout;
};

inline AttentionInputs attention_inputs(int64_t B, int64_t S, int64_t Hq, int64_t Hkv, int64_t D,
                                        int64_t window, DType dt, uint64_t seed) {
  AttentionInputs p;
  p.shape = {B, S, Hq, Hkv, D, 1.0 / std::sqrt(static_cast<double>(D)), window};
  // q and k in [-2, 2) spread the scores over a few units, so the softmax is far from uniform.
  p.q = random_tensor({B, S, Hq, D}, dt, seed, -2.f, 2.f);
  p.k = random_tensor({B, S, Hkv, D}, dt, seed + 1, -2.f, 2.f);
  p.v = random_tensor({B, S, Hkv, D}, dt, seed + 2);
  p.dout = random_tensor({B, S, Hq, D}, dt, seed + 3);
  return p;
}

inline bool attention_visible(const AttentionShape& s, int64_t i, int64_t j) {
  return j <= i && (s.window == 0 || i - j < s.window);
}

// Also within query i's document when the rows are packed.
inline bool attention_visible_at(const AttentionShape& s, int64_t b, int64_t i, int64_t j) {
  return attention_visible(s, i, j) &&
         (s.doc_starts.empty() || j >= s.doc_starts[static_cast<size_t>(b * s.S + i)]);
}

// doc_starts [B, S] of rows cut into documents of the given lengths (each row's lengths sum to S).
inline std::vector<int64_t> packed_doc_starts(const std::vector<std::vector<int64_t>>& lengths) {
  std::vector<int64_t> starts;
  for (const std::vector<int64_t>& row : lengths) {
    int64_t at = 0;
    for (int64_t n : row) {
      for (int64_t i = 0; i < n; ++i)
        starts.push_back(at);
      at += n;
    }
  }
  return starts;
}

// q [B, S, Hq, D], k and v [B, S, Hkv, D], dout like q (empty: forward only).
inline AttentionRef attention_reference(const AttentionShape& s, const std::vector<double>& q,
                                        const std::vector<double>& k, const std::vector<double>& v,
                                        const std::vector<double>& dout = {}) {
  const int64_t G = s.Hq / s.Hkv;
  auto qi = [&](int64_t b, int64_t i, int64_t h) { return ((b * s.S + i) * s.Hq + h) * s.D; };
  auto ki = [&](int64_t b, int64_t j, int64_t g) { return ((b * s.S + j) * s.Hkv + g) * s.D; };
  AttentionRef r;
  r.out.assign(q.size(), 0.0);
  r.lse.assign(static_cast<size_t>(s.B * s.Hq * s.S), 0.0);
  const bool grads = !dout.empty();
  if (grads) {
    r.dq.assign(q.size(), 0.0);
    r.dk.assign(k.size(), 0.0);
    r.dv.assign(v.size(), 0.0);
  }
  std::vector<double> p(static_cast<size_t>(s.S)), dp(static_cast<size_t>(s.S));
  for (int64_t b = 0; b < s.B; ++b)
    for (int64_t h = 0; h < s.Hq; ++h) {
      const int64_t g = h / G;
      for (int64_t i = 0; i < s.S; ++i) {
        double m = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < s.S; ++j) {
          if (!attention_visible_at(s, b, i, j)) continue;
          double dotv = 0;
          for (int64_t c = 0; c < s.D; ++c)
            dotv += q[qi(b, i, h) + c] * k[ki(b, j, g) + c];
          p[j] = s.scale * dotv;
          m = std::max(m, p[j]);
        }
        double sum = 0;
        for (int64_t j = 0; j < s.S; ++j) {
          p[j] = attention_visible_at(s, b, i, j) ? std::exp(p[j] - m) : 0.0;
          sum += p[j];
        }
        for (int64_t j = 0; j < s.S; ++j)
          p[j] /= sum;
        r.lse[(b * s.Hq + h) * s.S + i] = m + std::log(sum);
        for (int64_t j = 0; j < s.S; ++j)
          for (int64_t c = 0; c < s.D; ++c)
            r.out[qi(b, i, h) + c] += p[j] * v[ki(b, j, g) + c];
        if (!grads) continue;
        double di = 0;  // sum_j p_j dp_j = dO_i . O_i
        for (int64_t j = 0; j < s.S; ++j) {
          dp[j] = 0;
          for (int64_t c = 0; c < s.D; ++c)
            dp[j] += dout[qi(b, i, h) + c] * v[ki(b, j, g) + c];
          di += p[j] * dp[j];
        }
        for (int64_t j = 0; j < s.S; ++j) {
          if (p[j] == 0.0) continue;
          const double ds = p[j] * (dp[j] - di);
          for (int64_t c = 0; c < s.D; ++c) {
            r.dq[qi(b, i, h) + c] += s.scale * ds * k[ki(b, j, g) + c];
            r.dk[ki(b, j, g) + c] += s.scale * ds * q[qi(b, i, h) + c];
            r.dv[ki(b, j, g) + c] += p[j] * dout[qi(b, i, h) + c];
          }
        }
      }
    }
  return r;
}

}  // namespace zt::test
