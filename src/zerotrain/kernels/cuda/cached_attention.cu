// CUDA KV-cache attention, memory-bound (a decode step reads every cached key and value once).
// One block of kWarps warps per (query t, head h, batch b). Warp w takes the visible keys
// lo + w, lo + w + kWarps, ... in order; its lanes split the head dim (lane l holds elements
// l, l + 32, ...), reduce each score with a fixed butterfly of shuffles and keep an online softmax
// (running max, sum and output row in f32). The warps' partial results are then combined in warp
// order. No atomics: the same input gives bitwise the same output. Tested by
// tests/kernels/test_cached_attention_cuda.cpp against the CPU kernel.
#include <math.h>

#include "zerotrain/core/cuda/cuda_check.h"
#include "zerotrain/core/cuda/dispatch.cuh"
#include "zerotrain/kernels/cuda/cached_attention.h"

namespace zt::kernels::cuda {

namespace {

constexpr int kWarps = 4;
constexpr int kLanes = 32;
constexpr int kPerLane = static_cast<int>(kCachedAttentionMaxHeadDim) / kLanes;

__device__ __forceinline__ float warp_sum(float x) {
#pragma unroll
  for (int offset = kLanes / 2; offset > 0; offset /= 2)
    x += __shfl_xor_sync(0xffffffffu, x, offset);
  return x;
}

// q, out: [B, S, Hq, D]; k, v: [B, L, Hkv, D].
template <typename T>
__global__ void __launch_bounds__(kWarps* kLanes)
    cached_attention_kernel(const T* __restrict__ q, const T* __restrict__ k,
                            const T* __restrict__ v, T* __restrict__ out, int S, int Hq, int Hkv,
                            long long L, int D, long long past, float scale, long long window) {
  const int t = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
  const int warp = threadIdx.x / kLanes, lane = threadIdx.x % kLanes;
  const int g = h / (Hq / Hkv);
  const long long i = past + t;
  const long long lo = window > 0 && i - window + 1 > 0 ? i - window + 1 : 0;

  float qv[kPerLane], acc[kPerLane];
  const T* qrow = q + ((static_cast<long long>(b) * S + t) * Hq + h) * D;
#pragma unroll
  for (int e = 0; e < kPerLane; ++e) {
    const int d = lane + e * kLanes;
    qv[e] = d < D ? dev::to_f(qrow[d]) : 0.0f;
    acc[e] = 0.0f;
  }
  float m = -INFINITY, l = 0.0f;
  for (long long j = lo + warp; j <= i; j += kWarps) {
    const long long row = ((static_cast<long long>(b) * L + j) * Hkv + g) * D;
    float s = 0.0f;
#pragma unroll
    for (int e = 0; e < kPerLane; ++e) {
      const int d = lane + e * kLanes;
      if (d < D) s = fmaf(qv[e], dev::to_f(k[row + d]), s);
    }
    s = warp_sum(s) * scale;
    const float m_new = fmaxf(m, s);
    const float keep = expf(m - m_new), p = expf(s - m_new);
    l = l * keep + p;
#pragma unroll
    for (int e = 0; e < kPerLane; ++e) {
      const int d = lane + e * kLanes;
      if (d < D) acc[e] = acc[e] * keep + p * dev::to_f(v[row + d]);
    }
    m = m_new;
  }

  __shared__ float warp_max[kWarps], warp_sum_exp[kWarps];
  __shared__ float warp_acc[kWarps][kCachedAttentionMaxHeadDim];
  if (lane == 0) {
    warp_max[warp] = m;
    warp_sum_exp[warp] = l;
  }
#pragma unroll
  for (int e = 0; e < kPerLane; ++e) {
    const int d = lane + e * kLanes;
    if (d < D) warp_acc[warp][d] = acc[e];
  }
  __syncthreads();
  // Warp 0 always has key lo, so the maximum is finite; a warp without keys weighs 0.
  float total_max = warp_max[0];
  for (int w = 1; w < kWarps; ++w)
    total_max = fmaxf(total_max, warp_max[w]);
  float weight[kWarps], total = 0.0f;
  for (int w = 0; w < kWarps; ++w) {
    weight[w] = expf(warp_max[w] - total_max);
    total += warp_sum_exp[w] * weight[w];
  }
  T* orow = out + ((static_cast<long long>(b) * S + t) * Hq + h) * D;
  for (int d = threadIdx.x; d < D; d += kWarps * kLanes) {
    float o = 0.0f;
    for (int w = 0; w < kWarps; ++w)
      o += warp_acc[w][d] * weight[w];
    orow[d] = dev::from_f<T>(o / total);
  }
}

}  // namespace

void cached_attention_forward(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache,
                              int64_t past, Tensor& out, const AttentionOptions& opt,
                              Stream stream) {
  if (q.size(0) > 65535 || q.size(2) > 65535 || q.size(1) > 0x7fffffff)
    throw ValueError("cached_attention_forward",
                     str("q ", q.describe(),
                         ": more than 65535 batch rows or heads, or 2^31 "
                         "queries, do not fit the CUDA grid"));
  CudaDeviceGuard guard(q.device());
  const dim3 grid(static_cast<unsigned>(q.size(1)), static_cast<unsigned>(q.size(2)),
                  static_cast<unsigned>(q.size(0)));
  ZT_DISPATCH_FLOAT(q.dtype(), "cached_attention_forward", T, {
    cached_attention_kernel<T><<<grid, kWarps * kLanes, 0, to_cuda(stream)>>>(
        static_cast<const T*>(q.data()), static_cast<const T*>(k_cache.data()),
        static_cast<const T*>(v_cache.data()), static_cast<T*>(out.data()),
        static_cast<int>(q.size(1)), static_cast<int>(q.size(2)), static_cast<int>(k_cache.size(2)),
        k_cache.size(1), static_cast<int>(q.size(3)), past, opt.scale, opt.window);
    ZT_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace zt::kernels::cuda
