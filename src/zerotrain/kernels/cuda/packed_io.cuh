// The one 16-byte pack of elements of the memory-bound kernels (elementwise.cu, reduce.cu,
// cross_entropy.cu) and the optimizers (optim/cuda/packs.cuh). A pack holds 16 / sizeof(T)
// elements: 4 f32 or 8 f16/bf16. When the base pointer is 16-byte aligned a pack moves in one
// vectorized access; otherwise (a view at an odd offset) the same elements move one by one, in the
// same order, so a kernel computes bitwise the same result on either path. Include only from .cu
// files. Tested by tests/kernels/test_elementwise_cuda.cpp,
// tests/kernels/test_cross_entropy_cuda.cpp and tests/optim/test_optimizers_cuda.cpp.
#pragma once

#include <cstdint>

namespace zt::kernels::cuda {

template <typename T>
struct alignas(16) Pack {
  static constexpr int kSize = 16 / static_cast<int>(sizeof(T));
  T v[kSize];
};

inline bool is_aligned16(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

// Pack number `i` of p, i.e. elements [i * kSize, (i + 1) * kSize).
template <bool Aligned, typename T>
__device__ __forceinline__ Pack<T> load_pack(const T* p, long long i) {
  Pack<T> r;
  if constexpr (Aligned) {
    r = reinterpret_cast<const Pack<T>*>(p)[i];
  } else {
#pragma unroll
    for (int e = 0; e < Pack<T>::kSize; ++e)
      r.v[e] = p[i * Pack<T>::kSize + e];
  }
  return r;
}

template <bool Aligned, typename T>
__device__ __forceinline__ void store_pack(T* p, long long i, const Pack<T>& r) {
  if constexpr (Aligned) {
    reinterpret_cast<Pack<T>*>(p)[i] = r;
  } else {
#pragma unroll
    for (int e = 0; e < Pack<T>::kSize; ++e)
      p[i * Pack<T>::kSize + e] = r.v[e];
  }
}

// The pack at p read into r, or r written to p, as one 16-byte word (uint4) whatever T is: a
// single vector access. p must be 16-byte aligned. Both load forms are kept because nvcc schedules
// them differently: the optimizers read into an array of packs, cross_entropy.cu takes a value.
template <typename T>
__device__ __forceinline__ void load_word(const Pack<T>* p, Pack<T>& r) {
  *reinterpret_cast<uint4*>(&r) = *reinterpret_cast<const uint4*>(p);
}

template <typename T>
__device__ __forceinline__ Pack<T> load_word(const Pack<T>* p) {
  Pack<T> r;
  load_word(p, r);
  return r;
}

template <typename T>
__device__ __forceinline__ void store_word(Pack<T>* p, const Pack<T>& r) {
  *reinterpret_cast<uint4*>(p) = *reinterpret_cast<const uint4*>(&r);
}

}  // namespace zt::kernels::cuda
