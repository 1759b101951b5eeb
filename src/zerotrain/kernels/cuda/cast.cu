// CUDA cast between f32, f16 and bf16. Each thread converts a vector of V elements per step
// (16-byte loads or stores where both pointers allow it, grid-stride), with a scalar pass over the
// unaligned head and the tail. Results reproduce core/half.h bit for bit, NaN payloads included
// (see [Note: exact and fast conversions]). Same-dtype casts are a device copy.
// Tested by tests/kernels/test_cast_cuda.cpp (bitwise against the CPU cast).
#include "zerotrain/kernels/cuda/cast.h"

#include <cstdint>

#include "zerotrain/core/cuda/cuda_check.h"
#include "zerotrain/core/cuda/dispatch.cuh"
#include "zerotrain/kernels/cuda/float_packs.cuh"

namespace zt::kernels::cuda {

namespace {

// ---- element conversions ----------------------------------------------------------------------
// [Note: exact and fast conversions]
// The hardware conversions (cvt.rn) round to nearest even with subnormals kept, exactly like
// core/half.h, for every input except NaN, whose payload hardware may canonicalize. So a vector is
// converted with the hardware (two elements per instruction where it can), and only a vector that
// holds a NaN is converted again with the exact functions, which copy core/half.h's NaN rules.

__device__ __forceinline__ float widen_fast(float x) {
  return x;
}
__device__ __forceinline__ float widen_fast(__half x) {
  return __half2float(x);
}
__device__ __forceinline__ float widen_fast(__nv_bfloat16 x) {
  return __bfloat162float(x);
}

__device__ __forceinline__ float widen_exact(float x) {
  return x;
}
__device__ __forceinline__ float widen_exact(__nv_bfloat16 x) {
  return __bfloat162float(x);
}
__device__ __forceinline__ float widen_exact(__half x) {
  const uint16_t h = __half_as_ushort(x);
  if ((h & 0x7fffu) > 0x7c00u) {  // NaN: payload shifted into place, as the CPU does
    const uint32_t u = (static_cast<uint32_t>(h & 0x8000u) << 16) | 0x7f800000u |
                       (static_cast<uint32_t>(h & 0x3ffu) << 13);
    return __uint_as_float(u);
  }
  return __half2float(x);
}

template <typename T>
__device__ __forceinline__ T narrow_exact(float f);
template <>
__device__ __forceinline__ float narrow_exact<float>(float f) {
  return f;
}
template <>
__device__ __forceinline__ __nv_bfloat16 narrow_exact<__nv_bfloat16>(float f) {
  const uint32_t u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u)  // NaN: quiet, payload kept
    return __ushort_as_bfloat16(static_cast<uint16_t>((u >> 16) | 0x40u));
  return __float2bfloat16_rn(f);
}
template <>
__device__ __forceinline__ __half narrow_exact<__half>(float f) {
  const uint32_t u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u)  // NaN: sign kept, canonical quiet payload
    return __ushort_as_half(static_cast<uint16_t>(((u >> 16) & 0x8000u) | 0x7e00u));
  return __float2half_rn(f);
}

// Two elements at once with the hardware (exact unless a or b is NaN).
template <typename T>
__device__ __forceinline__ void narrow_fast2(float a, float b, T* out);
template <>
__device__ __forceinline__ void narrow_fast2<float>(float a, float b, float* out) {
  out[0] = a;
  out[1] = b;
}
template <>
__device__ __forceinline__ void narrow_fast2<__nv_bfloat16>(float a, float b, __nv_bfloat16* out) {
  const __nv_bfloat162 p = __floats2bfloat162_rn(a, b);
  out[0] = p.x;
  out[1] = p.y;
}
template <>
__device__ __forceinline__ void narrow_fast2<__half>(float a, float b, __half* out) {
  const __half2 p = __floats2half2_rn(a, b);
  out[0] = p.x;
  out[1] = p.y;
}

// ---- kernel ------------------------------------------------------------------------------------

// Elements per vector step: the wider of the two types moves 16 bytes.
template <typename S, typename D>
constexpr int vec_width() {
  return 16 / (sizeof(S) > sizeof(D) ? sizeof(S) : sizeof(D));
}

// Converts src[0, n) into dst. Elements [head, head + nvec * V) go by vectors (both pointers are
// aligned there); the head before and the tail after go one element at a time.
template <typename S, typename D>
__global__ void cast_kernel(const S* __restrict__ src, D* __restrict__ dst, long long n,
                            long long head, long long nvec) {
  constexpr int V = vec_width<S, D>();
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  const long long tid = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const auto* vs = reinterpret_cast<const dev::Pack<S, V>*>(src + head);
  auto* vd = reinterpret_cast<dev::Pack<D, V>*>(dst + head);
  for (long long i = tid; i < nvec; i += stride) {
    const dev::Pack<S, V> in = vs[i];
    dev::Pack<D, V> out;
    float f[V];
    bool nan = false;
#pragma unroll
    for (int k = 0; k < V; ++k) {
      f[k] = widen_fast(in.v[k]);
      nan |= f[k] != f[k];
    }
#pragma unroll
    for (int k = 0; k < V; k += 2)
      narrow_fast2<D>(f[k], f[k + 1], &out.v[k]);
    if (nan) {  // rare: redo the vector with core/half.h's NaN rules
#pragma unroll
      for (int k = 0; k < V; ++k)
        out.v[k] = narrow_exact<D>(widen_exact(in.v[k]));
    }
    vd[i] = out;
  }
  const long long body_end = head + nvec * V;
  const long long scalar = head + (n - body_end);
  for (long long j = tid; j < scalar; j += stride) {
    const long long i = j < head ? j : body_end + (j - head);
    dst[i] = narrow_exact<D>(widen_exact(src[i]));
  }
}

template <typename S, typename D>
void launch_cast(const void* src_v, void* dst_v, long long n, cudaStream_t stream) {
  constexpr int V = vec_width<S, D>();
  const auto* src = static_cast<const S*>(src_v);
  auto* dst = static_cast<D*>(dst_v);
  // Peel scalar elements until src is vector aligned; vectorize only if dst is aligned there too.
  const auto src_addr = reinterpret_cast<uintptr_t>(src);
  const auto dst_addr = reinterpret_cast<uintptr_t>(dst);
  const uintptr_t src_align = sizeof(S) * V, dst_align = sizeof(D) * V;
  long long head = 0, nvec = 0;
  if (src_addr % sizeof(S) == 0) {
    head = static_cast<long long>(((src_align - src_addr % src_align) % src_align) / sizeof(S));
    if (head > n) head = n;
    if ((dst_addr + head * sizeof(D)) % dst_align == 0) nvec = (n - head) / V;
  }
  if (nvec == 0) head = 0;
  constexpr int threads = 256;
  const long long work = nvec + head + (n - head - nvec * V);
  cast_kernel<S, D>
      <<<zt::dev::blocks_for(work, threads), threads, 0, stream>>>(src, dst, n, head, nvec);
  ZT_CUDA_CHECK_LAUNCH();
}

}  // namespace

void cast(const Tensor& src, Tensor& dst, Stream stream) {
  const long long n = src.numel();
  if (n == 0) return;
  CudaDeviceGuard guard(src.device());
  if (src.dtype() == dst.dtype()) {
    if (src.data() != dst.data())
      ZT_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), src.nbytes(), cudaMemcpyDeviceToDevice,
                                    to_cuda(stream)));
    return;
  }
  ZT_DISPATCH_FLOAT(src.dtype(), "cast", src_t, {
    ZT_DISPATCH_FLOAT(dst.dtype(), "cast", dst_t,
                      { launch_cast<src_t, dst_t>(src.data(), dst.data(), n, to_cuda(stream)); });
  });
}

}  // namespace zt::kernels::cuda
