// Device helpers of the optimizer kernels (optim/cuda/optimizers.cu, optim/cuda/lamb.cu): f32
// arithmetic with explicit rounding (nothing contracts into FMA, so results equal the CPU scalar
// path's), loads and stores of 8 f32 / bf16 / f16 elements as 16-byte packs (kernels/cuda/
// packed_io.cuh), and a fixed-tree block sum of two doubles. Tested by
// tests/optim/test_optimizers_cuda.cpp.
#pragma once

#include <cstdint>

#include "zerotrain/core/cuda/dispatch.cuh"
#include "zerotrain/kernels/cuda/packed_io.cuh"

namespace zt::optim::cuda::packs {

constexpr int kPack = 8;

__device__ __forceinline__ float mul(float a, float b) {
  return __fmul_rn(a, b);
}
__device__ __forceinline__ float add(float a, float b) {
  return __fadd_rn(a, b);
}
__device__ __forceinline__ float sub(float a, float b) {
  return __fsub_rn(a, b);
}
__device__ __forceinline__ float div(float a, float b) {
  return __fdiv_rn(a, b);
}

// kPack elements as whole 16-byte packs: one for bf16/f16, two for f32.
template <typename T>
constexpr int kWords = kPack / zt::kernels::cuda::Pack<T>::kSize;

// p must be 16-byte aligned. Elements keep their order: pack w holds p[w * size, (w + 1) * size).
template <typename T>
__device__ __forceinline__ void load8(const T* p, float (&out)[kPack]) {
  using P = zt::kernels::cuda::Pack<T>;
  const P* src = reinterpret_cast<const P*>(p);
  P r[kWords<T>];
#pragma unroll
  for (int w = 0; w < kWords<T>; ++w)
    zt::kernels::cuda::load_word(src + w, r[w]);
#pragma unroll
  for (int e = 0; e < kPack; ++e)
    out[e] = zt::dev::to_f(r[e / P::kSize].v[e % P::kSize]);
}

template <typename T>
__device__ __forceinline__ void store8(T* p, const float (&in)[kPack]) {
  using P = zt::kernels::cuda::Pack<T>;
  P r[kWords<T>];
#pragma unroll
  for (int e = 0; e < kPack; ++e)
    r[e / P::kSize].v[e % P::kSize] = zt::dev::from_f<T>(in[e]);
  P* dst = reinterpret_cast<P*>(p);
#pragma unroll
  for (int w = 0; w < kWords<T>; ++w)
    zt::kernels::cuda::store_word(dst + w, r[w]);
}

// Sums a and b over a block of kThreads threads (a multiple of 32) in a fixed order: a shuffle
// tree inside each warp, then the warps' sums in warp order. The totals are valid in thread 0.
// Every thread of the block must call it.
template <int kThreads>
__device__ __forceinline__ void block_sum2(double& a, double& b) {
  static_assert(kThreads % 32 == 0, "whole warps");
  constexpr int kWarps = kThreads / 32;
  __shared__ double sa[kWarps], sb[kWarps];
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) {
    a += __shfl_down_sync(0xffffffffu, a, off);
    b += __shfl_down_sync(0xffffffffu, b, off);
  }
  const int warp = static_cast<int>(threadIdx.x) / 32;
  if (threadIdx.x % 32 == 0) {
    sa[warp] = a;
    sb[warp] = b;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    a = 0;
    b = 0;
    for (int w = 0; w < kWarps; ++w) {
      a += sa[w];
      b += sb[w];
    }
  }
}

}  // namespace zt::optim::cuda::packs
