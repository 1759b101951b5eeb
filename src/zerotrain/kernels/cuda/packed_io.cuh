// 16-byte packs of elements for memory-bound kernels (elementwise.cu, reduce.cu). A pack holds
// 16 / sizeof(T) elements: 4 f32 or 8 f16/bf16. When the base pointer is 16-byte aligned a pack
// moves in one vectorized access; otherwise (a view at an odd offset) the same elements move one by
// one, in the same order, so a kernel computes bitwise the same result on either path.
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

}  // namespace zt::kernels::cuda
