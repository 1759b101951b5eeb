// Device element types and dtype dispatch for CUDA kernels (namespace zt::dev).
//   ZT_DISPATCH_FLOAT(t.dtype(), "op", scalar_t, { launch<scalar_t>(...); });
// runs the body with scalar_t = float, __half or __nv_bfloat16. to_f / from_f convert to and from
// float in device code for all three.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "zerotrain/core/dtype.h"
#include "zerotrain/core/error.h"

namespace zt::dev {

__device__ __forceinline__ float to_f(float x) { return x; }
__device__ __forceinline__ float to_f(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_f(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename T>
__device__ __forceinline__ T from_f(float x);
template <>
__device__ __forceinline__ float from_f<float>(float x) { return x; }
template <>
__device__ __forceinline__ __half from_f<__half>(float x) { return __float2half_rn(x); }
template <>
__device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

inline unsigned int blocks_for(long long n, int threads, long long max_blocks = 65535LL * 16) {
  long long b = (n + threads - 1) / threads;
  if (b < 1) b = 1;
  return static_cast<unsigned int>(b < max_blocks ? b : max_blocks);
}

}  // namespace zt::dev

#define ZT_DISPATCH_CASE_(enum_v, type, alias, ...) \
  case ::zt::DType::enum_v: {                       \
    using alias = type;                             \
    __VA_ARGS__;                                    \
    break;                                          \
  }

#define ZT_DISPATCH_FLOAT(dtype, op, alias, ...)                                              \
  switch (dtype) {                                                                            \
    ZT_DISPATCH_CASE_(f32, float, alias, __VA_ARGS__)                                         \
    ZT_DISPATCH_CASE_(f16, __half, alias, __VA_ARGS__)                                        \
    ZT_DISPATCH_CASE_(bf16, __nv_bfloat16, alias, __VA_ARGS__)                                \
    default:                                                                                  \
      throw ::zt::DTypeError(op, ::zt::str("unsupported dtype ", ::zt::dtype_name(dtype)));   \
  }
