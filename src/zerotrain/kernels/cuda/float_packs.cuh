// Device helpers shared by the norm, rope, embedding and cast kernels (packed_io.cuh holds the
// 16-byte packs of the elementwise kernels and the optimizers): packs of N elements of up to 16
// bytes per access converted to and from float, rounding to a storage dtype, and a deterministic
// block-wide sum. Include only from .cu files. Tested by tests/kernels/test_norm_cuda.cpp,
// tests/kernels/test_rope_cuda.cpp, tests/kernels/test_embedding_cuda.cpp and
// tests/kernels/test_cast_cuda.cpp.
#pragma once

#include <cstdint>

#include "zerotrain/core/cuda/dispatch.cuh"

namespace zt::dev {

// Bytes moved per packed access: 8 bf16/f16 or 4 f32 elements.
constexpr int kPackBytes = 16;

// N elements of T accessed as one aligned unit (two 16-byte accesses when N * sizeof(T) is 32).
template <typename T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

// p must be aligned to N * sizeof(T).
template <typename T, int N>
__device__ __forceinline__ void load_pack(const T* p, float (&out)[N]) {
  const Pack<T, N> pk = *reinterpret_cast<const Pack<T, N>*>(p);
#pragma unroll
  for (int i = 0; i < N; ++i)
    out[i] = to_f(pk.v[i]);
}

template <typename T, int N>
__device__ __forceinline__ void store_pack(T* p, const float (&in)[N]) {
  Pack<T, N> pk;
#pragma unroll
  for (int i = 0; i < N; ++i)
    pk.v[i] = from_f<T>(in[i]);
  *reinterpret_cast<Pack<T, N>*>(p) = pk;
}

// The value a tensor of element type T holds after storing v (identity for float).
template <typename T>
__device__ __forceinline__ float round_to(float v) {
  return to_f(from_f<T>(v));
}

// Sums v[0..K) over the block; every thread gets the same bits. blockDim.x must be a multiple of
// 32 (at most 1024) and smem must hold 32 * K floats. The combination order is fixed (xor
// butterfly within each warp, then warps in index order), so results repeat run to run. Ends with
// a barrier, so smem may be reused right away.
template <int K>
__device__ __forceinline__ void block_sum(float (&v)[K], float* smem) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
#pragma unroll
  for (int k = 0; k < K; ++k) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
      v[k] += __shfl_xor_sync(0xffffffffu, v[k], off);
    if (lane == 0) smem[k * 32 + warp] = v[k];
  }
  __syncthreads();
#pragma unroll
  for (int k = 0; k < K; ++k) {
    float s = 0.0f;
    for (int i = 0; i < warps; ++i)
      s += smem[k * 32 + i];
    v[k] = s;
  }
  __syncthreads();
}

}  // namespace zt::dev

namespace zt::kernels::cuda {

inline bool is_aligned(const void* p, size_t bytes) {
  return reinterpret_cast<uintptr_t>(p) % bytes == 0;
}

inline int round_up(long long n, int m) {
  return static_cast<int>((n + m - 1) / m * m);
}

}  // namespace zt::kernels::cuda
