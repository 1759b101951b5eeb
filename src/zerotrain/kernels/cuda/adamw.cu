// CUDA AdamW: one grid-stride pass. Each thread updates 8 consecutive elements per iteration with
// 16-byte loads and stores of every buffer (two per f32 buffer), then a scalar loop covers the
// last n % 8 elements; when any buffer is not 16-byte aligned the whole range takes the scalar
// path. The arithmetic is the same f32 sequence as the CPU kernel (cpu/adamw.h), up to FMA
// contraction. Tested by tests/kernels/test_adamw_cuda.cpp.
#include <cstdint>

#include "zerotrain/core/cuda/cuda_check.h"
#include "zerotrain/core/cuda/dispatch.cuh"
#include "zerotrain/kernels/cuda/adamw.h"

namespace zt::kernels::cuda {

namespace {

using zt::dev::from_f;
using zt::dev::to_f;

constexpr int kThreads = 256;
constexpr int kPack = 8;  // elements per thread per iteration

enum class CopyKind : int { none, f16, bf16 };

// 8 elements of T, 16-byte aligned: 16 bytes for f16/bf16, 32 for f32.
template <typename T>
struct alignas(16) Pack8 {
  T v[kPack];
};

template <typename T>
__device__ __forceinline__ void load8(const T* p, float (&out)[kPack]) {
  Pack8<T> r;
  constexpr int kWords = static_cast<int>(sizeof(Pack8<T>) / 16);
#pragma unroll
  for (int w = 0; w < kWords; ++w)
    reinterpret_cast<uint4*>(&r)[w] = reinterpret_cast<const uint4*>(p)[w];
#pragma unroll
  for (int e = 0; e < kPack; ++e)
    out[e] = to_f(r.v[e]);
}

template <typename T>
__device__ __forceinline__ void store8(T* p, const float (&in)[kPack]) {
  Pack8<T> r;
#pragma unroll
  for (int e = 0; e < kPack; ++e)
    r.v[e] = from_f<T>(in[e]);
  constexpr int kWords = static_cast<int>(sizeof(Pack8<T>) / 16);
#pragma unroll
  for (int w = 0; w < kWords; ++w)
    reinterpret_cast<uint4*>(p)[w] = reinterpret_cast<const uint4*>(&r)[w];
}

// The update of cpu/adamw.h for one element.
__device__ __forceinline__ void update(float& p, float g, float& m, float& v,
                                       const cpu::AdamWScalars& s) {
  g = g * s.grad_scale;
  p = p * s.decay;
  m = s.beta1 * m + s.one_minus_beta1 * g;
  v = s.beta2 * v + s.one_minus_beta2 * (g * g);
  const float denom = sqrtf(v) / s.bc2_sqrt + s.eps;
  p = p - s.step_size * (m / denom);
}

// The param as stored, then rounded to the copy's dtype.
template <typename P>
__device__ __forceinline__ float stored(float p) {
  return to_f(from_f<P>(p));
}

template <typename P, typename G, typename S>
__global__ void __launch_bounds__(kThreads)
    adamw_kernel(P* __restrict__ param, const G* __restrict__ grad, S* __restrict__ m,
                 S* __restrict__ v, void* __restrict__ copy, CopyKind copy_kind, int64_t n,
                 int64_t npacks, cpu::AdamWScalars s) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (int64_t j = first; j < npacks; j += stride) {
    const int64_t i0 = j * kPack;
    float p[kPack], g[kPack], mm[kPack], vv[kPack];
    load8(param + i0, p);
    load8(grad + i0, g);
    load8(m + i0, mm);
    load8(v + i0, vv);
#pragma unroll
    for (int e = 0; e < kPack; ++e)
      update(p[e], g[e], mm[e], vv[e], s);
    store8(param + i0, p);
    store8(m + i0, mm);
    store8(v + i0, vv);
    if (copy_kind != CopyKind::none) {
#pragma unroll
      for (int e = 0; e < kPack; ++e)
        p[e] = stored<P>(p[e]);
      if (copy_kind == CopyKind::bf16)
        store8(static_cast<__nv_bfloat16*>(copy) + i0, p);
      else
        store8(static_cast<__half*>(copy) + i0, p);
    }
  }
  for (int64_t i = npacks * kPack + first; i < n; i += stride) {
    float p = to_f(param[i]), mi = to_f(m[i]), vi = to_f(v[i]);
    update(p, to_f(grad[i]), mi, vi, s);
    param[i] = from_f<P>(p);
    m[i] = from_f<S>(mi);
    v[i] = from_f<S>(vi);
    if (copy_kind == CopyKind::bf16)
      static_cast<__nv_bfloat16*>(copy)[i] = from_f<__nv_bfloat16>(stored<P>(p));
    else if (copy_kind == CopyKind::f16)
      static_cast<__half*>(copy)[i] = from_f<__half>(stored<P>(p));
  }
}

bool aligned16(const void* p) {
  return (reinterpret_cast<uintptr_t>(p) & 15u) == 0;
}

template <typename P, typename G, typename S>
void launch(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const cpu::AdamWScalars& s,
            Tensor* param_copy, Stream stream) {
  const int64_t n = param.numel();
  void* copy = param_copy ? param_copy->data() : nullptr;
  const CopyKind kind = !param_copy                          ? CopyKind::none
                        : param_copy->dtype() == DType::bf16 ? CopyKind::bf16
                                                             : CopyKind::f16;
  const bool vectorized = aligned16(param.data()) && aligned16(grad.data()) &&
                          aligned16(m.data()) && aligned16(v.data()) &&
                          (copy == nullptr || aligned16(copy));
  const int64_t npacks = vectorized ? n / kPack : 0;
  // Enough threads for the packs, or for the scalar elements when there are no packs.
  const int64_t work = npacks > 0 ? npacks : n;
  adamw_kernel<P, G, S><<<zt::dev::blocks_for(work, kThreads), kThreads, 0, to_cuda(stream)>>>(
      static_cast<P*>(param.data()), static_cast<const G*>(grad.data()), static_cast<S*>(m.data()),
      static_cast<S*>(v.data()), copy, kind, n, npacks, s);
  ZT_CUDA_CHECK_LAUNCH();
}

}  // namespace

void adamw_step(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const cpu::AdamWScalars& s,
                Tensor* param_copy, Stream stream) {
  constexpr std::string_view op = "adamw_step";
  CudaDeviceGuard guard(param.device());
  ZT_DISPATCH_FLOAT(param.dtype(), op, P, {
    ZT_DISPATCH_FLOAT(grad.dtype(), op, G, {
      if (m.dtype() == DType::f32)
        launch<P, G, float>(param, grad, m, v, s, param_copy, stream);
      else
        launch<P, G, P>(param, grad, m, v, s, param_copy, stream);
    });
  });
}

}  // namespace zt::kernels::cuda
