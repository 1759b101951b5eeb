// CUDA RMSNorm and LayerNorm forward: one block per row. Rows that fit the register plan (see
// [Note: norm row plans]) are read once with 16-byte loads and kept in registers; other rows are
// streamed twice. Statistics are f32 sums over the block in a fixed order (packed_io.cuh), so
// outputs repeat bitwise. Tested by tests/kernels/test_norm_cuda.cpp.
#include <algorithm>

#include "zerotrain/core/cuda/cuda_check.h"
#include "zerotrain/kernels/cuda/norm.h"
#include "zerotrain/kernels/cuda/norm_plan.cuh"

namespace zt::kernels::cuda {

namespace {

using dev::load_pack;
using dev::round_to;
using dev::store_pack;

// y = w * round_T(x * rstd) (RMSNorm, Hugging Face LlamaRMSNorm order: normalize in f32, round to
// the input dtype, then multiply by the weight), or y = (x - mean) * rstd * w + b rounded once
// (LayerNorm, as PyTorch's layer_norm).
template <typename T, bool kLayer>
__device__ __forceinline__ float norm_out(float xv, float mean, float rstd, float wv, float bv) {
  if constexpr (kLayer)
    return (xv - mean) * rstd * wv + bv;
  else
    return wv * round_to<T>(xv * rstd);
}

// x, y: [rows, cols] T; w, b: [cols] W (b may be null); mean (LayerNorm only), rstd: [rows] f32.
// Launch bounds: RMSNorm asks for a full SM (2048 threads, so at most 32 registers a thread); more
// resident rows hide the load latency, measured 2.87 TB/s against 2.60 without the bound (H200,
// bf16, 4096 x 4096). LayerNorm holds more per element and ran slower under that cap (3.12 TB/s
// against 3.42 at 16384 x 4096), so it asks for 3 blocks (at most 42 registers).
template <typename T, typename W, int PPT, bool kLayer>
__global__ void __launch_bounds__(kMaxRowThreads, kLayer ? 3 : 2048 / kMaxRowThreads)
    norm_fwd_rows(const T* __restrict__ x, const W* __restrict__ w, const W* __restrict__ b,
                  T* __restrict__ y, float* __restrict__ mean_out, float* __restrict__ rstd_out,
                  long long rows, int cols, float eps) {
  constexpr int V = dev::kPackBytes / sizeof(T);
  __shared__ float smem[32];
  const int packs = cols / V;
  for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * cols;
    dev::Pack<T, V> xv[PPT];  // the row as stored (half the registers of floats for 16-bit T)
    float s[1] = {0.0f};
#pragma unroll
    for (int k = 0; k < PPT; ++k) {
      const int p = threadIdx.x + k * blockDim.x;
      if (p < packs) {
        xv[k] = *reinterpret_cast<const dev::Pack<T, V>*>(xr + static_cast<long long>(p) * V);
      } else {
#pragma unroll
        for (int i = 0; i < V; ++i)
          xv[k].v[i] = dev::from_f<T>(0.0f);
      }
#pragma unroll
      for (int i = 0; i < V; ++i) {
        const float v = dev::to_f(xv[k].v[i]);
        s[0] += kLayer ? v : v * v;
      }
    }
    dev::block_sum(s, smem);
    float mean = 0.0f, rstd;
    if constexpr (kLayer) {
      mean = s[0] / cols;
      float s2[1] = {0.0f};
#pragma unroll
      for (int k = 0; k < PPT; ++k) {
        if (threadIdx.x + k * blockDim.x < packs) {
#pragma unroll
          for (int i = 0; i < V; ++i) {
            const float d = dev::to_f(xv[k].v[i]) - mean;
            s2[0] += d * d;
          }
        }
      }
      dev::block_sum(s2, smem);
      rstd = rsqrtf(s2[0] / cols + eps);
    } else {
      rstd = rsqrtf(s[0] / cols + eps);
    }
    if (threadIdx.x == 0) {
      rstd_out[row] = rstd;
      if constexpr (kLayer) mean_out[row] = mean;
    }
    T* yr = y + row * cols;
#pragma unroll
    for (int k = 0; k < PPT; ++k) {
      const int p = threadIdx.x + k * blockDim.x;
      if (p >= packs) continue;
      float wv[V], bv[V], out[V];
      load_pack<W, V>(w + static_cast<long long>(p) * V, wv);
      if (kLayer && b) {
        load_pack<W, V>(b + static_cast<long long>(p) * V, bv);
      } else {
#pragma unroll
        for (int i = 0; i < V; ++i)
          bv[i] = 0.0f;
      }
#pragma unroll
      for (int i = 0; i < V; ++i)
        out[i] = norm_out<T, kLayer>(dev::to_f(xv[k].v[i]), mean, rstd, wv[i], bv[i]);
      store_pack<T, V>(yr + static_cast<long long>(p) * V, out);
    }
  }
}

// Any shape: the row is read once for the statistics and again for the output.
template <typename T, typename W, bool kLayer>
__global__ void __launch_bounds__(kAnyThreads)
    norm_fwd_any(const T* __restrict__ x, const W* __restrict__ w, const W* __restrict__ b,
                 T* __restrict__ y, float* __restrict__ mean_out, float* __restrict__ rstd_out,
                 long long rows, int cols, float eps) {
  __shared__ float smem[32];
  for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * cols;
    float s[1] = {0.0f};
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
      const float v = dev::to_f(xr[c]);
      s[0] += kLayer ? v : v * v;
    }
    dev::block_sum(s, smem);
    float mean = 0.0f, rstd;
    if constexpr (kLayer) {
      mean = s[0] / cols;
      float s2[1] = {0.0f};
      for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        const float d = dev::to_f(xr[c]) - mean;
        s2[0] += d * d;
      }
      dev::block_sum(s2, smem);
      rstd = rsqrtf(s2[0] / cols + eps);
    } else {
      rstd = rsqrtf(s[0] / cols + eps);
    }
    if (threadIdx.x == 0) {
      rstd_out[row] = rstd;
      if constexpr (kLayer) mean_out[row] = mean;
    }
    T* yr = y + row * cols;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
      const float bv = (kLayer && b) ? dev::to_f(b[c]) : 0.0f;
      yr[c] =
          dev::from_f<T>(norm_out<T, kLayer>(dev::to_f(xr[c]), mean, rstd, dev::to_f(w[c]), bv));
    }
  }
}

template <bool kLayer>
void launch_forward(const char* op, const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y,
                    Tensor* mean, Tensor& rstd, float eps, Stream stream) {
  const long long rows = x.size(0), cols = x.size(1);
  if (rows == 0) return;
  CudaDeviceGuard guard(x.device());
  const unsigned grid = static_cast<unsigned>(std::min<long long>(rows, 1LL << 30));
  float* mean_p = mean ? mean->data_as<float>() : nullptr;
  float* rstd_p = rstd.data_as<float>();
  dispatch_x_w(x.dtype(), w.dtype(), op, [&](auto xtag, auto wtag) {
    using T = decltype(xtag);
    using W = decltype(wtag);
    constexpr size_t V = dev::kPackBytes / sizeof(T);
    const T* xp = static_cast<const T*>(x.data());
    T* yp = static_cast<T*>(y.data());
    const W* wp = static_cast<const W*>(w.data());
    const W* bp = b.defined() ? static_cast<const W*>(b.data()) : nullptr;
    const bool aligned = is_aligned(xp, dev::kPackBytes) && is_aligned(yp, dev::kPackBytes) &&
                         is_aligned(wp, V * sizeof(W)) && (!bp || is_aligned(bp, V * sizeof(W)));
    const RowPlan plan = plan_rows<T>(cols, aligned, /*wide=*/true);
    if (plan.packs_per_thread > 0) {
      with_packs_per_thread<T>(plan.packs_per_thread, [&](auto ppt) {
        norm_fwd_rows<T, W, decltype(ppt)::value, kLayer>
            <<<grid, plan.threads, 0, to_cuda(stream)>>>(xp, wp, bp, yp, mean_p, rstd_p, rows,
                                                         static_cast<int>(cols), eps);
      });
    } else {
      const int threads = std::min(kAnyThreads, round_up(cols, 32));
      norm_fwd_any<T, W, kLayer><<<grid, threads, 0, to_cuda(stream)>>>(
          xp, wp, bp, yp, mean_p, rstd_p, rows, static_cast<int>(cols), eps);
    }
    ZT_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace

void rmsnorm_forward(const Tensor& x, const Tensor& w, Tensor& y, Tensor& rstd, float eps,
                     Stream stream) {
  launch_forward<false>("rmsnorm_forward", x, w, Tensor(), y, nullptr, rstd, eps, stream);
}

void layernorm_forward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y, Tensor& mean,
                       Tensor& rstd, float eps, Stream stream) {
  launch_forward<true>("layernorm_forward", x, w, b, y, &mean, rstd, eps, stream);
}

}  // namespace zt::kernels::cuda
