// CUDA RMSNorm and LayerNorm backward. dx per row as in the forward (see [Note: norm row plans]).
// Weight/bias gradients are deterministic two-stage column sums: on the register path each block
// accumulates its own rows (row = blockIdx.x + k * gridDim.x) in registers and writes one f32
// partial row; on the generic path a column-tile kernel sums fixed row chunks. A final kernel adds
// the partial rows in index order. No atomics, so gradients repeat bitwise for a device and shape.
// Tested by tests/kernels/test_norm_cuda.cpp.
#include <algorithm>

#include "zerotrain/core/cuda/cuda_check.h"
#include "zerotrain/kernels/cuda/norm.h"
#include "zerotrain/kernels/cuda/norm_plan.cuh"

namespace zt::kernels::cuda {

namespace {

using dev::load_pack;
using dev::store_pack;

constexpr int kTileCols = 32;  // column-tile kernels: blocks of kTileCols x kTileRows threads
constexpr int kTileRows = 8;
constexpr long long kChunkRows = 64;  // generic path: rows per partial, at least
constexpr long long kMaxChunks = 1024;

// g = dy * w is rounded on its own (__fmul_rn) wherever it is used, so that the row sums and the
// per-element terms of dx agree: no FMA contraction of g - mean(g), which would leave dx != 0 where
// it is exactly 0 (e.g. C = 1 LayerNorm).
//
// x, dy, dx: [rows, cols] T; w: [cols] W; mean (LayerNorm only), rstd: [rows] f32.
// dw_part, db_part: [gridDim.x, cols] f32, this block's column sums of dy * xhat and dy (db_part
// null: no bias gradient). dx may alias dy: a row is fully loaded before the barrier in block_sum.
template <typename T, typename W, int PPT, bool kLayer>
__global__ void __launch_bounds__(kMaxRowThreads)
    norm_bwd_rows(const T* __restrict__ x, const W* __restrict__ w, const float* __restrict__ mean,
                  const float* __restrict__ rstd, const T* dy, T* dx, float* __restrict__ dw_part,
                  float* __restrict__ db_part, long long rows, int cols) {
  constexpr int V = dev::kPackBytes / sizeof(T);
  __shared__ float smem[64];
  const int packs = cols / V;
  float wv[PPT][V], gw[PPT][V], gb[PPT][V];
#pragma unroll
  for (int k = 0; k < PPT; ++k) {
    const int p = threadIdx.x + k * blockDim.x;
    if (p < packs) {
      load_pack<W, V>(w + static_cast<long long>(p) * V, wv[k]);
    } else {
#pragma unroll
      for (int i = 0; i < V; ++i)
        wv[k][i] = 0.0f;
    }
#pragma unroll
    for (int i = 0; i < V; ++i)
      gw[k][i] = gb[k][i] = 0.0f;
  }
  for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
    const float r = rstd[row], m = kLayer ? mean[row] : 0.0f;
    const long long base = row * cols;
    float xh[PPT][V], dyv[PPT][V];
    float s[2] = {0.0f, 0.0f};  // sums of g = dy * w and of g * xhat
#pragma unroll
    for (int k = 0; k < PPT; ++k) {
      const int p = threadIdx.x + k * blockDim.x;
      if (p < packs) {
        load_pack<T, V>(x + base + static_cast<long long>(p) * V, xh[k]);
        load_pack<T, V>(dy + base + static_cast<long long>(p) * V, dyv[k]);
      } else {
#pragma unroll
        for (int i = 0; i < V; ++i)
          xh[k][i] = dyv[k][i] = 0.0f;
      }
#pragma unroll
      for (int i = 0; i < V; ++i) {
        xh[k][i] = (xh[k][i] - m) * r;
        const float g = __fmul_rn(dyv[k][i], wv[k][i]);
        s[0] += g;
        s[1] += g * xh[k][i];
      }
    }
    dev::block_sum(s, smem);
    const float a = kLayer ? s[0] / cols : 0.0f, q = s[1] / cols;
#pragma unroll
    for (int k = 0; k < PPT; ++k) {
      const int p = threadIdx.x + k * blockDim.x;
      if (p >= packs) continue;
      float out[V];
#pragma unroll
      for (int i = 0; i < V; ++i) {
        out[i] = r * (__fmul_rn(dyv[k][i], wv[k][i]) - a - xh[k][i] * q);
        gw[k][i] += dyv[k][i] * xh[k][i];
        if constexpr (kLayer) gb[k][i] += dyv[k][i];
      }
      store_pack<T, V>(dx + base + static_cast<long long>(p) * V, out);
    }
  }
  const long long part = static_cast<long long>(blockIdx.x) * cols;
#pragma unroll
  for (int k = 0; k < PPT; ++k) {
    const int p = threadIdx.x + k * blockDim.x;
    if (p >= packs) continue;
    store_pack<float, V>(dw_part + part + static_cast<long long>(p) * V, gw[k]);
    if (kLayer && db_part)
      store_pack<float, V>(db_part + part + static_cast<long long>(p) * V, gb[k]);
  }
}

// Any shape: dx only (weight gradients come from norm_bwd_dw_any, launched first since dx may
// alias dy).
template <typename T, typename W, bool kLayer>
__global__ void __launch_bounds__(kAnyThreads)
    norm_bwd_dx_any(const T* __restrict__ x, const W* __restrict__ w,
                    const float* __restrict__ mean, const float* __restrict__ rstd, const T* dy,
                    T* dx, long long rows, int cols) {
  __shared__ float smem[64];
  for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
    const float r = rstd[row], m = kLayer ? mean[row] : 0.0f;
    const T* xr = x + row * cols;
    const T* dyr = dy + row * cols;
    T* dxr = dx + row * cols;
    float s[2] = {0.0f, 0.0f};
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
      const float g = __fmul_rn(dev::to_f(dyr[c]), dev::to_f(w[c]));
      s[0] += g;
      s[1] += g * ((dev::to_f(xr[c]) - m) * r);
    }
    dev::block_sum(s, smem);
    const float a = kLayer ? s[0] / cols : 0.0f, q = s[1] / cols;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
      const float g = __fmul_rn(dev::to_f(dyr[c]), dev::to_f(w[c]));
      const float xh = (dev::to_f(xr[c]) - m) * r;
      dxr[c] = dev::from_f<T>(r * (g - a - xh * q));
    }
  }
}

// Any shape: block (kTileCols, kTileRows) sums rows [blockIdx.y * chunk, ...) of one column tile
// into dw_part / db_part [gridDim.y, cols]. mean null: zero mean (RMSNorm).
template <typename T>
__global__ void __launch_bounds__(kTileCols* kTileRows)
    norm_bwd_dw_any(const T* __restrict__ x, const float* __restrict__ mean,
                    const float* __restrict__ rstd, const T* __restrict__ dy,
                    float* __restrict__ dw_part, float* __restrict__ db_part, long long rows,
                    int cols, long long chunk) {
  __shared__ float sw[kTileRows][kTileCols + 1], sb[kTileRows][kTileCols + 1];
  const int col = blockIdx.x * kTileCols + threadIdx.x;
  const long long r0 = blockIdx.y * chunk, r1 = r0 + chunk < rows ? r0 + chunk : rows;
  float aw = 0.0f, ab = 0.0f;
  if (col < cols) {
    for (long long row = r0 + threadIdx.y; row < r1; row += kTileRows) {
      const long long i = row * cols + col;
      const float g = dev::to_f(dy[i]);
      aw += g * ((dev::to_f(x[i]) - (mean ? mean[row] : 0.0f)) * rstd[row]);
      ab += g;
    }
  }
  sw[threadIdx.y][threadIdx.x] = aw;
  sb[threadIdx.y][threadIdx.x] = ab;
  __syncthreads();
  if (threadIdx.y == 0 && col < cols) {
    float tw = 0.0f, tb = 0.0f;
    for (int j = 0; j < kTileRows; ++j) {
      tw += sw[j][threadIdx.x];
      tb += sb[j][threadIdx.x];
    }
    const long long o = static_cast<long long>(blockIdx.y) * cols + col;
    dw_part[o] = tw;
    if (db_part) db_part[o] = tb;
  }
}

// out[c] (G = f32 or the weight dtype) = (accumulate ? out[c] : 0) + sum over p of part[p, c],
// the partial rows added in index order.
template <typename G>
__global__ void __launch_bounds__(kTileCols* kTileRows)
    column_sum(const float* __restrict__ part, int parts, int cols, G* __restrict__ out,
               bool accumulate) {
  __shared__ float sm[kTileRows][kTileCols + 1];
  const int col = blockIdx.x * kTileCols + threadIdx.x;
  float acc = 0.0f;
  if (col < cols)
    for (int p = threadIdx.y; p < parts; p += kTileRows)
      acc += part[static_cast<long long>(p) * cols + col];
  sm[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.y == 0 && col < cols) {
    float t = 0.0f;
    for (int j = 0; j < kTileRows; ++j)
      t += sm[j][threadIdx.x];
    out[col] = dev::from_f<G>(accumulate ? dev::to_f(out[col]) + t : t);
  }
}

void launch_column_sum(const char* op, const float* part, int parts, int cols, Tensor& out,
                       bool accumulate, Stream stream) {
  const dim3 block(kTileCols, kTileRows);
  const unsigned grid = static_cast<unsigned>((cols + kTileCols - 1) / kTileCols);
  ZT_DISPATCH_FLOAT(out.dtype(), op, G, {
    column_sum<G><<<grid, block, 0, to_cuda(stream)>>>(part, parts, cols,
                                                       static_cast<G*>(out.data()), accumulate);
  });
  ZT_CUDA_CHECK_LAUNCH();
}

int multiprocessors(Device d) {
  int n = 0;
  ZT_CUDA_CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, d.index));
  return n;
}

template <bool kLayer>
void launch_backward(const char* op, const Tensor& x, const Tensor& w, const Tensor* mean,
                     const Tensor& rstd, const Tensor& dy, Tensor& dx, Tensor& dw, Tensor* db,
                     bool accumulate, Stream stream) {
  const long long rows = x.size(0), cols = x.size(1);
  CudaDeviceGuard guard(x.device());
  const float* mean_p = mean ? mean->data_as<float>() : nullptr;
  const float* rstd_p = rstd.data_as<float>();
  Tensor dw_part, db_part;  // [parts, cols] f32 scratch
  int parts = 0;
  if (rows > 0) {
    dispatch_x_w(x.dtype(), w.dtype(), op, [&](auto xtag, auto wtag) {
      using T = decltype(xtag);
      using W = decltype(wtag);
      constexpr size_t V = dev::kPackBytes / sizeof(T);
      const T* xp = static_cast<const T*>(x.data());
      const T* dyp = static_cast<const T*>(dy.data());
      T* dxp = static_cast<T*>(dx.data());
      const W* wp = static_cast<const W*>(w.data());
      const bool aligned = is_aligned(xp, dev::kPackBytes) && is_aligned(dyp, dev::kPackBytes) &&
                           is_aligned(dxp, dev::kPackBytes) && is_aligned(wp, V * sizeof(W));
      const RowPlan plan = plan_rows<T>(cols, aligned, /*wide=*/false);
      auto scratch = [&](long long n) {
        dw_part = Tensor::empty({n, cols}, DType::f32, x.device(), stream);
        if (db) db_part = Tensor::empty({n, cols}, DType::f32, x.device(), stream);
        parts = static_cast<int>(n);
      };
      if (plan.packs_per_thread > 0) {
        with_packs_per_thread<T>(plan.packs_per_thread, [&](auto ppt) {
          auto kernel = norm_bwd_rows<T, W, decltype(ppt)::value, kLayer>;
          int per_sm = 0;
          ZT_CUDA_CHECK(
              cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, plan.threads, 0));
          scratch(std::min<long long>(
              rows, static_cast<long long>(std::max(per_sm, 1)) * multiprocessors(x.device())));
          kernel<<<parts, plan.threads, 0, to_cuda(stream)>>>(
              xp, wp, mean_p, rstd_p, dyp, dxp, dw_part.data_as<float>(),
              db ? db_part.data_as<float>() : nullptr, rows, static_cast<int>(cols));
          ZT_CUDA_CHECK_LAUNCH();
        });
      } else {
        const long long n = std::min(kMaxChunks, (rows + kChunkRows - 1) / kChunkRows);
        const long long chunk = (rows + n - 1) / n;
        scratch(n);
        const dim3 tile_grid(static_cast<unsigned>((cols + kTileCols - 1) / kTileCols),
                             static_cast<unsigned>(n));
        norm_bwd_dw_any<T><<<tile_grid, dim3(kTileCols, kTileRows), 0, to_cuda(stream)>>>(
            xp, mean_p, rstd_p, dyp, dw_part.data_as<float>(),
            db ? db_part.data_as<float>() : nullptr, rows, static_cast<int>(cols), chunk);
        ZT_CUDA_CHECK_LAUNCH();
        const unsigned grid = static_cast<unsigned>(std::min<long long>(rows, 1LL << 30));
        const int threads = std::min(kAnyThreads, round_up(cols, 32));
        norm_bwd_dx_any<T, W, kLayer><<<grid, threads, 0, to_cuda(stream)>>>(
            xp, wp, mean_p, rstd_p, dyp, dxp, rows, static_cast<int>(cols));
        ZT_CUDA_CHECK_LAUNCH();
      }
    });
  }
  const int c = static_cast<int>(cols);
  launch_column_sum(op, parts ? dw_part.data_as<float>() : nullptr, parts, c, dw, accumulate,
                    stream);
  if (db)
    launch_column_sum(op, parts ? db_part.data_as<float>() : nullptr, parts, c, *db, accumulate,
                      stream);
}

}  // namespace

void rmsnorm_backward(const Tensor& x, const Tensor& w, const Tensor& rstd, const Tensor& dy,
                      Tensor& dx, Tensor& dw, bool accumulate, Stream stream) {
  launch_backward<false>("rmsnorm_backward", x, w, nullptr, rstd, dy, dx, dw, nullptr, accumulate,
                         stream);
}

void layernorm_backward(const Tensor& x, const Tensor& w, const Tensor& mean, const Tensor& rstd,
                        const Tensor& dy, Tensor& dx, Tensor& dw, Tensor& db, bool accumulate,
                        Stream stream) {
  launch_backward<true>("layernorm_backward", x, w, &mean, rstd, dy, dx, dw,
                        db.defined() ? &db : nullptr, accumulate, stream);
}

}  // namespace zt::kernels::cuda
