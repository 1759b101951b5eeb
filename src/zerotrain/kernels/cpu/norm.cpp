// CPU RMSNorm and LayerNorm. Rows run in parallel (OpenMP); row statistics are accumulated in
// float64 and stored as f32. Weight/bias gradients are reduced over rows per column block, each
// block summing its rows in order, so results do not depend on the thread count.
// Tested by tests/kernels/test_norm.cpp.
#include "zerotrain/kernels/cpu/norm.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "zerotrain/kernels/cpu/float_types.h"

namespace zt::kernels::cpu {

namespace {

constexpr int64_t kColumnBlock = 64;  // columns per weight-gradient task

std::vector<float> to_float_vector(const Tensor& t) {
  std::vector<float> v(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = load_as_float(t.data(), t.dtype(), i);
  return v;
}

// dst (f32 or a 16-bit float dtype, [C]) = (accumulate ? dst : 0) + src.
void store_grad(Tensor& dst, const std::vector<double>& src, bool accumulate) {
  for (size_t c = 0; c < src.size(); ++c) {
    const float prev = accumulate ? load_as_float(dst.data(), dst.dtype(), c) : 0.0f;
    store_from_float(dst.data(), dst.dtype(), c, prev + static_cast<float>(src[c]));
  }
}

// Column sums over rows of dy * xhat (and of dy when db is wanted), xhat = (x - mean) * rstd.
// mean == nullptr means zero mean (RMSNorm).
template <typename T>
void weight_grads(const T* x, const T* dy, const float* mean, const float* rstd, int64_t rows,
                  int64_t cols, std::vector<double>& dw, std::vector<double>* db) {
  dw.assign(static_cast<size_t>(cols), 0.0);
  if (db) db->assign(static_cast<size_t>(cols), 0.0);
  const int64_t blocks = (cols + kColumnBlock - 1) / kColumnBlock;
#pragma omp parallel for schedule(static)
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const int64_t c0 = blk * kColumnBlock, c1 = std::min(cols, c0 + kColumnBlock);
    for (int64_t n = 0; n < rows; ++n) {
      const float m = mean ? mean[n] : 0.0f, r = rstd[n];
      const T* xr = x + n * cols;
      const T* dyr = dy + n * cols;
      for (int64_t c = c0; c < c1; ++c) {
        const float g = static_cast<float>(dyr[c]);
        const float xh = (static_cast<float>(xr[c]) - m) * r;
        dw[static_cast<size_t>(c)] += static_cast<double>(g) * xh;
        if (db) (*db)[static_cast<size_t>(c)] += g;
      }
    }
  }
}

template <typename T>
void rms_forward(const Tensor& x, const std::vector<float>& w, Tensor& y, Tensor& rstd, float eps) {
  const int64_t rows = x.size(0), cols = x.size(1);
  const T* xp = static_cast<const T*>(x.data());
  T* yp = static_cast<T*>(y.data());
  float* rp = rstd.data_as<float>();
#pragma omp parallel for schedule(static)
  for (int64_t n = 0; n < rows; ++n) {
    const T* xr = xp + n * cols;
    T* yr = yp + n * cols;
    double ss = 0;
    for (int64_t c = 0; c < cols; ++c) {
      const double v = static_cast<float>(xr[c]);
      ss += v * v;
    }
    const float r = static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(cols) + eps));
    rp[n] = r;
    // Hugging Face LlamaRMSNorm order: normalize in f32, round to the input dtype, then multiply
    // by the weight and round again (one rounding only for f32).
    for (int64_t c = 0; c < cols; ++c) {
      const float t = round_to<T>(static_cast<float>(xr[c]) * r);
      yr[c] = T(w[static_cast<size_t>(c)] * t);
    }
  }
}

template <typename T>
void rms_backward(const Tensor& x, const std::vector<float>& w, const Tensor& rstd,
                  const Tensor& dy, Tensor& dx, std::vector<double>& dw) {
  const int64_t rows = x.size(0), cols = x.size(1);
  const T* xp = static_cast<const T*>(x.data());
  const T* dyp = static_cast<const T*>(dy.data());
  T* dxp = static_cast<T*>(dx.data());
  const float* rp = rstd.data_as<float>();
  // dw first: dx may alias dy.
  weight_grads(xp, dyp, nullptr, rp, rows, cols, dw, nullptr);
#pragma omp parallel for schedule(static)
  for (int64_t n = 0; n < rows; ++n) {
    const T* xr = xp + n * cols;
    const T* dyr = dyp + n * cols;
    T* dxr = dxp + n * cols;
    const float r = rp[n];
    double dot = 0;  // sum of (dy * w) * xhat
    for (int64_t c = 0; c < cols; ++c) {
      const float g = static_cast<float>(dyr[c]) * w[static_cast<size_t>(c)];
      dot += static_cast<double>(g) * (static_cast<float>(xr[c]) * r);
    }
    const float m = static_cast<float>(dot / static_cast<double>(cols));
    for (int64_t c = 0; c < cols; ++c) {
      const float g = static_cast<float>(dyr[c]) * w[static_cast<size_t>(c)];
      const float xh = static_cast<float>(xr[c]) * r;
      dxr[c] = T(r * (g - xh * m));
    }
  }
}

template <typename T>
void ln_forward(const Tensor& x, const std::vector<float>& w, const std::vector<float>* b,
                Tensor& y, Tensor& mean, Tensor& rstd, float eps) {
  const int64_t rows = x.size(0), cols = x.size(1);
  const T* xp = static_cast<const T*>(x.data());
  T* yp = static_cast<T*>(y.data());
  float* mp = mean.data_as<float>();
  float* rp = rstd.data_as<float>();
#pragma omp parallel for schedule(static)
  for (int64_t n = 0; n < rows; ++n) {
    const T* xr = xp + n * cols;
    T* yr = yp + n * cols;
    double s = 0;
    for (int64_t c = 0; c < cols; ++c)
      s += static_cast<float>(xr[c]);
    const double mu = s / static_cast<double>(cols);
    double ss = 0;
    for (int64_t c = 0; c < cols; ++c) {
      const double d = static_cast<float>(xr[c]) - mu;
      ss += d * d;
    }
    const float m = static_cast<float>(mu);
    const float r = static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(cols) + eps));
    mp[n] = m;
    rp[n] = r;
    // As PyTorch's layer_norm: everything in f32, one rounding to the output dtype.
    for (int64_t c = 0; c < cols; ++c) {
      const size_t k = static_cast<size_t>(c);
      const float v = (static_cast<float>(xr[c]) - m) * r * w[k];
      yr[c] = T(b ? v + (*b)[k] : v);
    }
  }
}

template <typename T>
void ln_backward(const Tensor& x, const std::vector<float>& w, const Tensor& mean,
                 const Tensor& rstd, const Tensor& dy, Tensor& dx, std::vector<double>& dw,
                 std::vector<double>* db) {
  const int64_t rows = x.size(0), cols = x.size(1);
  const T* xp = static_cast<const T*>(x.data());
  const T* dyp = static_cast<const T*>(dy.data());
  T* dxp = static_cast<T*>(dx.data());
  const float* mp = mean.data_as<float>();
  const float* rp = rstd.data_as<float>();
  weight_grads(xp, dyp, mp, rp, rows, cols, dw, db);  // before dx: dx may alias dy
#pragma omp parallel for schedule(static)
  for (int64_t n = 0; n < rows; ++n) {
    const T* xr = xp + n * cols;
    const T* dyr = dyp + n * cols;
    T* dxr = dxp + n * cols;
    const float m = mp[n], r = rp[n];
    double sg = 0, sgx = 0;  // sums of g = dy * w and of g * xhat
    for (int64_t c = 0; c < cols; ++c) {
      const float g = static_cast<float>(dyr[c]) * w[static_cast<size_t>(c)];
      sg += g;
      sgx += static_cast<double>(g) * ((static_cast<float>(xr[c]) - m) * r);
    }
    const float a = static_cast<float>(sg / static_cast<double>(cols));
    const float q = static_cast<float>(sgx / static_cast<double>(cols));
    for (int64_t c = 0; c < cols; ++c) {
      const float g = static_cast<float>(dyr[c]) * w[static_cast<size_t>(c)];
      const float xh = (static_cast<float>(xr[c]) - m) * r;
      dxr[c] = T(r * (g - a - xh * q));
    }
  }
}

}  // namespace

void rmsnorm_forward(const Tensor& x, const Tensor& w, Tensor& y, Tensor& rstd, float eps) {
  const std::vector<float> wf = to_float_vector(w);
  visit_float(x.dtype(), "rmsnorm_forward",
              [&](auto tag) { rms_forward<decltype(tag)>(x, wf, y, rstd, eps); });
}

void rmsnorm_backward(const Tensor& x, const Tensor& w, const Tensor& rstd, const Tensor& dy,
                      Tensor& dx, Tensor& dw, bool accumulate) {
  const std::vector<float> wf = to_float_vector(w);
  std::vector<double> gw;
  visit_float(x.dtype(), "rmsnorm_backward",
              [&](auto tag) { rms_backward<decltype(tag)>(x, wf, rstd, dy, dx, gw); });
  store_grad(dw, gw, accumulate);
}

void layernorm_forward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y, Tensor& mean,
                       Tensor& rstd, float eps) {
  const std::vector<float> wf = to_float_vector(w);
  const std::vector<float> bf = b.defined() ? to_float_vector(b) : std::vector<float>{};
  const std::vector<float>* bp = b.defined() ? &bf : nullptr;
  visit_float(x.dtype(), "layernorm_forward",
              [&](auto tag) { ln_forward<decltype(tag)>(x, wf, bp, y, mean, rstd, eps); });
}

void layernorm_backward(const Tensor& x, const Tensor& w, const Tensor& mean, const Tensor& rstd,
                        const Tensor& dy, Tensor& dx, Tensor& dw, Tensor& db, bool accumulate) {
  const std::vector<float> wf = to_float_vector(w);
  std::vector<double> gw, gb;
  std::vector<double>* gbp = db.defined() ? &gb : nullptr;
  visit_float(x.dtype(), "layernorm_backward",
              [&](auto tag) { ln_backward<decltype(tag)>(x, wf, mean, rstd, dy, dx, gw, gbp); });
  store_grad(dw, gw, accumulate);
  if (gbp) store_grad(db, gb, accumulate);
}

}  // namespace zt::kernels::cpu
