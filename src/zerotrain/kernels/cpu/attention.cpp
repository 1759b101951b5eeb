// CPU causal grouped-query attention, forward and backward, one output row at a time.
// Forward row (b, h, i): scores s_j = scale q_i.k_j over the visible keys j, softmax, weighted sum
// of v_j, lse_i = log sum_j exp(s_j). Backward with the saved lse and D_i = dO_i.O_i:
//   p_ij = exp(s_ij - lse_i), ds_ij = p_ij (dO_i.v_j - D_i),
//   dq_i = scale sum_j ds_ij k_j,  dk_j = scale sum_{h,i} ds_ij q_i,  dv_j = sum_{h,i} p_ij dO_i,
// where the dk/dv sums run over the query heads h of the kv head and the queries i that see j
// (causal, within the window, and in j's document when the rows are packed).
// dq rows and dk/dv rows are computed independently (the scores are recomputed for each), so every
// row has one writer and a fixed summation order: the result does not depend on the thread count.
// Dot products are f32 with 8 fixed lanes, softmax sums and accumulators f64.
// Tested by tests/kernels/test_attention.cpp (float64 reference, finite differences).
#include "zerotrain/kernels/cpu/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "zerotrain/kernels/check.h"
#include "zerotrain/kernels/cpu/lane_dot.h"

namespace zt::kernels::cpu {

namespace {

// Read-only f32 view of a contiguous tensor: its own data for f32, a converted copy otherwise.
class FloatView {
 public:
  explicit FloatView(const Tensor& t) {
    if (t.dtype() == DType::f32) {
      p_ = t.data_as<float>();
      return;
    }
    const int64_t n = t.numel();
    copy_.resize(static_cast<size_t>(n));
    const void* src = t.data();
    const DType dt = t.dtype();
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i)
      copy_[i] = load_as_float(src, dt, static_cast<size_t>(i));
    p_ = copy_.data();
  }
  const float* data() const {
    return p_;
  }

 private:
  std::vector<float> copy_;
  const float* p_ = nullptr;
};

struct Dims {
  int64_t B, S, Hq, Hkv, D;
  int64_t G;       // query heads per kv head
  double scale;    // resolved softmax scale
  int64_t window;  // 0: full causal
  const int32_t* doc_starts = nullptr;  // [B, S] or null: see AttentionOptions::doc_starts

  Dims(const Tensor& q, const Tensor& k, const AttentionOptions& opt)
      : B(q.size(0)), S(q.size(1)), Hq(q.size(2)), Hkv(k.size(2)), D(q.size(3)), G(Hq / Hkv) {
    scale = opt.scale != 0.0f ? opt.scale : 1.0 / std::sqrt(static_cast<double>(D));
    window = opt.window >= S ? 0 : opt.window;
    if (opt.doc_starts.defined()) doc_starts = opt.doc_starts.data_as<int32_t>();
  }
  // Element offset of row (b, i, head) in a [B, S, H, D] tensor.
  int64_t row(int64_t b, int64_t i, int64_t head, int64_t heads) const {
    return ((b * S + i) * heads + head) * D;
  }
  // Offset of (b, h, i) in a [B, Hq, S] tensor (lse, D).
  int64_t stat(int64_t b, int64_t h, int64_t i) const { return (b * Hq + h) * S + i; }
  // Query i of row b sees keys [first_key(b, i), i]; key j is seen by the queries i in
  // [j, last_query(j)] with first_key(b, i) <= j.
  int64_t first_key(int64_t b, int64_t i) const {
    const int64_t lo = window > 0 ? std::max<int64_t>(0, i - window + 1) : 0;
    return doc_starts ? std::max<int64_t>(lo, doc_starts[b * S + i]) : lo;
  }
  int64_t last_query(int64_t j) const {
    return window > 0 ? std::min<int64_t>(S - 1, j + window - 1) : S - 1;
  }
  // Whether query i's document starts after key j (only packed rows hide such keys).
  bool in_earlier_document(int64_t b, int64_t i, int64_t j) const {
    return doc_starts && doc_starts[b * S + i] > j;
  }
};

// doc_starts[b, i] in [0, i] for every position, or a ValueError naming the first one that is not.
void check_doc_start_values(std::string_view op, const Dims& d) {
  if (!d.doc_starts) return;
  for (int64_t b = 0; b < d.B; ++b)
    for (int64_t i = 0; i < d.S; ++i) {
      const int64_t start = d.doc_starts[b * d.S + i];
      if (start < 0 || start > i)
        throw ValueError(op, str("doc_starts[", b, ", ", i, "] = ", start, ": a document start must ",
                                 "lie in [0, ", i, "], at or before its position"));
    }
}

void check_rows(std::string_view op, std::string_view name, const std::vector<int64_t>& rows,
                int64_t S) {
  for (int64_t r : rows)
    if (r < 0 || r >= S)
      throw ValueError(op, str(name, " holds position ", r, ", outside [0, ", S, ")"));
}

// Scaled scores of query row q_i against keys [lo, i] into `scores`; returns their maximum.
double row_scores(const Dims& d, const float* qi, const float* k, int64_t b, int64_t g, int64_t lo,
                  int64_t i, std::vector<double>& scores) {
  double m = -std::numeric_limits<double>::infinity();
  for (int64_t j = lo; j <= i; ++j) {
    const double s = d.scale * lane_dot(qi, k + d.row(b, j, g, d.Hkv), d.D);
    scores[static_cast<size_t>(j - lo)] = s;
    m = std::max(m, s);
  }
  return m;
}

// D_i = dO_i . O_i for every (b, h, i), laid out like lse.
std::vector<double> row_dots(const Dims& d, const float* out, const float* dout) {
  std::vector<double> dd(static_cast<size_t>(d.B * d.Hq * d.S));
#pragma omp parallel for collapse(3) schedule(static)
  for (int64_t b = 0; b < d.B; ++b)
    for (int64_t h = 0; h < d.Hq; ++h)
      for (int64_t i = 0; i < d.S; ++i) {
        const float* o = out + d.row(b, i, h, d.Hq);
        const float* go = dout + d.row(b, i, h, d.Hq);
        double acc = 0;
        for (int64_t c = 0; c < d.D; ++c)
          acc += static_cast<double>(o[c]) * go[c];
        dd[static_cast<size_t>(d.stat(b, h, i))] = acc;
      }
  return dd;
}

void check_rows_output(std::string_view op, std::string_view name, const Tensor& t, const Tensor& q,
                       const Shape& shape) {
  check_arg(op, name, t, q, "q");
  check_same_dtype(op, "q", q, name, t);
  check_shape(op, name, t, shape);
}

}  // namespace

void attention_forward_rows(const Tensor& q, const Tensor& k, const Tensor& v,
                            const std::vector<int64_t>& rows, Tensor& out_rows, Tensor& lse_rows,
                            const AttentionOptions& opt) {
  constexpr std::string_view op = "attention_forward_rows";
  const Dims d(q, k, opt);
  const auto R = static_cast<int64_t>(rows.size());
  check_rows(op, "rows", rows, d.S);
  check_doc_start_values(op, d);
  check_rows_output(op, "out_rows", out_rows, q, {d.B, R, d.Hq, d.D});
  check_arg(op, "lse_rows", lse_rows, q, "q");
  check_dtype(op, "lse_rows", lse_rows, {DType::f32});
  check_shape(op, "lse_rows", lse_rows, {d.B, d.Hq, R});

  const FloatView qf(q), kf(k), vf(v);
  void* out = out_rows.data();
  const DType odt = out_rows.dtype();
  float* lse = lse_rows.data_as<float>();
#pragma omp parallel
  {
    std::vector<double> scores(static_cast<size_t>(d.S)), acc(static_cast<size_t>(d.D));
#pragma omp for collapse(3) schedule(dynamic, 4)
    for (int64_t b = 0; b < d.B; ++b)
      for (int64_t h = 0; h < d.Hq; ++h)
        for (int64_t r = 0; r < R; ++r) {
          const int64_t i = rows[static_cast<size_t>(r)], g = h / d.G, lo = d.first_key(b, i);
          const float* qi = qf.data() + d.row(b, i, h, d.Hq);
          const double m = row_scores(d, qi, kf.data(), b, g, lo, i, scores);
          std::fill(acc.begin(), acc.end(), 0.0);
          double sum = 0;
          for (int64_t j = lo; j <= i; ++j) {
            const double p = std::exp(scores[static_cast<size_t>(j - lo)] - m);
            sum += p;
            const float* vj = vf.data() + d.row(b, j, g, d.Hkv);
            for (int64_t c = 0; c < d.D; ++c)
              acc[static_cast<size_t>(c)] += p * vj[c];
          }
          const int64_t o = ((b * R + r) * d.Hq + h) * d.D;
          for (int64_t c = 0; c < d.D; ++c)
            store_from_float(out, odt, static_cast<size_t>(o + c),
                             static_cast<float>(acc[static_cast<size_t>(c)] / sum));
          lse[(b * d.Hq + h) * R + r] = static_cast<float>(m + std::log(sum));
        }
  }
}

void attention_backward_rows(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                             const Tensor& lse, const Tensor& dout,
                             const std::vector<int64_t>& q_rows, Tensor& dq_rows,
                             const std::vector<int64_t>& kv_rows, Tensor& dk_rows, Tensor& dv_rows,
                             const AttentionOptions& opt) {
  constexpr std::string_view op = "attention_backward_rows";
  const Dims d(q, k, opt);
  const auto Rq = static_cast<int64_t>(q_rows.size()), Rkv = static_cast<int64_t>(kv_rows.size());
  check_rows(op, "q_rows", q_rows, d.S);
  check_rows(op, "kv_rows", kv_rows, d.S);
  check_doc_start_values(op, d);
  check_rows_output(op, "dq_rows", dq_rows, q, {d.B, Rq, d.Hq, d.D});
  check_rows_output(op, "dk_rows", dk_rows, q, {d.B, Rkv, d.Hkv, d.D});
  check_rows_output(op, "dv_rows", dv_rows, q, {d.B, Rkv, d.Hkv, d.D});

  const FloatView qf(q), kf(k), vf(v), of(out), gof(dout);
  const float* ls = lse.data_as<float>();
  const std::vector<double> dd = row_dots(d, of.data(), gof.data());
  const DType dt = q.dtype();

  // dq rows: one (b, h, query) row per task.
  void* dq = dq_rows.data();
#pragma omp parallel
  {
    std::vector<double> acc(static_cast<size_t>(d.D));
#pragma omp for collapse(3) schedule(dynamic, 4)
    for (int64_t b = 0; b < d.B; ++b)
      for (int64_t h = 0; h < d.Hq; ++h)
        for (int64_t r = 0; r < Rq; ++r) {
          const int64_t i = q_rows[static_cast<size_t>(r)], g = h / d.G;
          const float* qi = qf.data() + d.row(b, i, h, d.Hq);
          const float* goi = gof.data() + d.row(b, i, h, d.Hq);
          const double lse_i = ls[d.stat(b, h, i)], d_i = dd[static_cast<size_t>(d.stat(b, h, i))];
          std::fill(acc.begin(), acc.end(), 0.0);
          for (int64_t j = d.first_key(b, i); j <= i; ++j) {
            const float* kj = kf.data() + d.row(b, j, g, d.Hkv);
            const float* vj = vf.data() + d.row(b, j, g, d.Hkv);
            const double p = std::exp(d.scale * lane_dot(qi, kj, d.D) - lse_i);
            const double ds = p * (lane_dot(goi, vj, d.D) - d_i);
            for (int64_t c = 0; c < d.D; ++c)
              acc[static_cast<size_t>(c)] += ds * kj[c];
          }
          const int64_t o = ((b * Rq + r) * d.Hq + h) * d.D;
          for (int64_t c = 0; c < d.D; ++c)
            store_from_float(dq, dt, static_cast<size_t>(o + c),
                             static_cast<float>(d.scale * acc[static_cast<size_t>(c)]));
        }
  }

  // dk/dv rows: one (b, kv head, key) row per task, summing over the group's query heads.
  void* dk = dk_rows.data();
  void* dv = dv_rows.data();
#pragma omp parallel
  {
    std::vector<double> acc_k(static_cast<size_t>(d.D)), acc_v(static_cast<size_t>(d.D));
#pragma omp for collapse(3) schedule(dynamic, 4)
    for (int64_t b = 0; b < d.B; ++b)
      for (int64_t g = 0; g < d.Hkv; ++g)
        for (int64_t r = 0; r < Rkv; ++r) {
          const int64_t j = kv_rows[static_cast<size_t>(r)];
          const float* kj = kf.data() + d.row(b, j, g, d.Hkv);
          const float* vj = vf.data() + d.row(b, j, g, d.Hkv);
          std::fill(acc_k.begin(), acc_k.end(), 0.0);
          std::fill(acc_v.begin(), acc_v.end(), 0.0);
          for (int64_t h = g * d.G; h < (g + 1) * d.G; ++h)
            for (int64_t i = j; i <= d.last_query(j); ++i) {
              if (d.in_earlier_document(b, i, j)) continue;
              const float* qi = qf.data() + d.row(b, i, h, d.Hq);
              const float* goi = gof.data() + d.row(b, i, h, d.Hq);
              const double p = std::exp(d.scale * lane_dot(qi, kj, d.D) - ls[d.stat(b, h, i)]);
              const double ds =
                  p * (lane_dot(goi, vj, d.D) - dd[static_cast<size_t>(d.stat(b, h, i))]);
              for (int64_t c = 0; c < d.D; ++c) {
                acc_k[static_cast<size_t>(c)] += ds * qi[c];
                acc_v[static_cast<size_t>(c)] += p * goi[c];
              }
            }
          const int64_t o = ((b * Rkv + r) * d.Hkv + g) * d.D;
          for (int64_t c = 0; c < d.D; ++c) {
            store_from_float(dk, dt, static_cast<size_t>(o + c),
                             static_cast<float>(d.scale * acc_k[static_cast<size_t>(c)]));
            store_from_float(dv, dt, static_cast<size_t>(o + c),
                             static_cast<float>(acc_v[static_cast<size_t>(c)]));
          }
        }
  }
}

void attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, Tensor& out, Tensor& lse,
                       const AttentionOptions& opt) {
  std::vector<int64_t> all(static_cast<size_t>(q.size(1)));
  std::iota(all.begin(), all.end(), int64_t{0});
  attention_forward_rows(q, k, v, all, out, lse, opt);
}

void attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                        const Tensor& lse, const Tensor& dout, Tensor& dq, Tensor& dk, Tensor& dv,
                        const AttentionOptions& opt) {
  std::vector<int64_t> all(static_cast<size_t>(q.size(1)));
  std::iota(all.begin(), all.end(), int64_t{0});
  attention_backward_rows(q, k, v, out, lse, dout, all, dq, all, dk, dv, opt);
}

}  // namespace zt::kernels::cpu
