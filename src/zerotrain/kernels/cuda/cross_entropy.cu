// CUDA softmax cross-entropy: one block per row. The row is read in 16-byte packs (a scalar head
// up to the first 16-byte boundary, then packs, then a scalar tail), each thread keeps an online
// (max, sum of exp) pair, and the block combines the pairs in a fixed tree, so results are
// deterministic. exp(x - c) is computed in f32 as exp2((x - c) * log2(e)), the subtraction first:
// it is exact when x is close to c, so the row maximum contributes exactly 1 and p - 1 at a target
// keeps its digits (see grad_of).
// The fused kernel reads the row once for its statistics and once more to write the gradient in
// place; no f32 copy of the logits exists. Tested by tests/kernels/test_cross_entropy_cuda.cpp.
#include <cstdint>
#include <limits>

#include "zerotrain/core/cuda/cuda_check.h"
#include "zerotrain/core/cuda/dispatch.cuh"
#include "zerotrain/kernels/cuda/cross_entropy.h"
#include "zerotrain/kernels/cuda/packed_io.cuh"

namespace zt::kernels::cuda {

namespace {

using zt::dev::from_f;
using zt::dev::to_f;

constexpr int kThreads = 512;  // one block per row
constexpr int kWarps = kThreads / 32;
constexpr int kUnroll = 4;  // packs in flight per thread
constexpr float kLog2e = 1.4426950408889634f;

// A row as [head scalars][nvec 16-byte-aligned packs][tail scalars, from tail0 to V).
struct RowSplit {
  int64_t head;
  int64_t nvec;
  int64_t tail0;
};

template <typename T>
__device__ __forceinline__ RowSplit split_row(const T* row, int64_t V) {
  constexpr int64_t kN = Pack<T>::kSize;
  const auto addr = reinterpret_cast<uintptr_t>(row);
  int64_t head = static_cast<int64_t>(((16u - (addr & 15u)) & 15u) / sizeof(T));
  if (head > V) head = V;
  const int64_t nvec = (V - head) / kN;
  return {head, nvec, head + nvec * kN};
}

// Online softmax statistics: running max m and sum of exp(x - m).
struct Stats {
  float m;
  float s;
};

// Adds K values to a thread's statistics. NaN inputs make s NaN.
template <int K>
__device__ __forceinline__ void stats_add(Stats& st, const float (&x)[K]) {
  float vm = x[0];
#pragma unroll
  for (int k = 1; k < K; ++k)
    vm = fmaxf(vm, x[k]);
  if (vm > st.m) {
    st.s = __fmul_rn(st.s, exp2f(__fmul_rn(st.m - vm, kLog2e)));
    st.m = vm;
  }
  if (st.m == -INFINITY) {  // nothing but -inf (or NaN) seen so far
#pragma unroll
    for (int k = 0; k < K; ++k)
      if (isnan(x[k])) st.s = x[k];
    return;
  }
#pragma unroll
  for (int k = 0; k < K; ++k)
    st.s = __fadd_rn(st.s, exp2f(__fmul_rn(__fsub_rn(x[k], st.m), kLog2e)));
}

// Commutative (no contraction), so both lanes of a butterfly agree bitwise.
__device__ __forceinline__ Stats combine(Stats a, Stats b) {
  const float m = fmaxf(a.m, b.m);
  if (m == -INFINITY) return {m, __fadd_rn(a.s, b.s)};
  return {m, __fadd_rn(__fmul_rn(a.s, exp2f(__fmul_rn(a.m - m, kLog2e))),
                       __fmul_rn(b.s, exp2f(__fmul_rn(b.m - m, kLog2e))))};
}

__device__ __forceinline__ Stats warp_combine(Stats st) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) {
    const Stats o{__shfl_xor_sync(0xffffffffu, st.m, off), __shfl_xor_sync(0xffffffffu, st.s, off)};
    st = combine(st, o);
  }
  return st;
}

// Block-wide combination in a fixed tree; every thread gets the result. smem: kWarps + 1 slots.
__device__ __forceinline__ Stats block_combine(Stats st, Stats* smem) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  st = warp_combine(st);
  if (lane == 0) smem[warp] = st;
  __syncthreads();
  if (warp == 0) {
    st = lane < kWarps ? smem[lane] : Stats{-INFINITY, 0.f};
    st = warp_combine(st);
    if (lane == 0) smem[kWarps] = st;
  }
  __syncthreads();
  return smem[kWarps];
}

// log(sum exp(row)) for one row of V >= 1 logits; every thread of the block gets the result.
// All threads have finished reading the row when this returns.
template <typename T>
__device__ float row_logsumexp(const T* row, int64_t V, Stats* smem) {
  constexpr int kN = Pack<T>::kSize;
  const RowSplit sp = split_row(row, V);
  const int64_t tid = threadIdx.x;
  Stats st{-INFINITY, 0.f};
  if (tid < sp.head) {
    const float x[1] = {to_f(row[tid])};
    stats_add(st, x);
  }
  const Pack<T>* body = reinterpret_cast<const Pack<T>*>(row + sp.head);
  for (int64_t j = tid; j < sp.nvec; j += int64_t{kThreads} * kUnroll) {
    Pack<T> p[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (j + u * kThreads < sp.nvec) p[u] = load_word(body + j + u * kThreads);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (j + u * kThreads < sp.nvec) {
        float x[kN];
#pragma unroll
        for (int e = 0; e < kN; ++e)
          x[e] = to_f(p[u].v[e]);
        stats_add(st, x);
      }
    }
  }
  for (int64_t i = sp.tail0 + tid; i < V; i += kThreads) {
    const float x[1] = {to_f(row[i])};
    stats_add(st, x);
  }
  st = block_combine(st, smem);
  return st.m + logf(st.s);
}

// grad_scale * (softmax - onehot) for one element. x - lse is exact when the two are close
// (Sterbenz), so p - 1 for a target holding most of the mass keeps its digits; folding lse into
// an FMA with log2(e) would lose up to an ulp of lse * log2(e) there.
__device__ __forceinline__ float grad_of(float x, float lse, float grad_scale, bool is_target) {
  const float p = exp2f(__fmul_rn(__fsub_rn(x, lse), kLog2e));
  return __fmul_rn(grad_scale, is_target ? __fsub_rn(p, 1.f) : p);
}

// d = grad_scale * (softmax(x) - onehot(t)) for one row, given its lse; d may alias x. t < 0: no
// target element. lse NaN makes the whole row NaN.
template <typename T>
__device__ void row_gradient(const T* x, T* d, int64_t V, float lse, float grad_scale, int64_t t) {
  constexpr int kN = Pack<T>::kSize;
  const int64_t tid = threadIdx.x;
  const bool same_alignment =
      ((reinterpret_cast<uintptr_t>(x) ^ reinterpret_cast<uintptr_t>(d)) & 15u) == 0;
  if (!same_alignment) {
    for (int64_t i = tid; i < V; i += kThreads)
      d[i] = from_f<T>(grad_of(to_f(x[i]), lse, grad_scale, i == t));
    return;
  }
  const RowSplit sp = split_row(x, V);
  if (tid < sp.head) d[tid] = from_f<T>(grad_of(to_f(x[tid]), lse, grad_scale, tid == t));
  const Pack<T>* in = reinterpret_cast<const Pack<T>*>(x + sp.head);
  Pack<T>* out = reinterpret_cast<Pack<T>*>(d + sp.head);
  for (int64_t j = tid; j < sp.nvec; j += int64_t{kThreads} * kUnroll) {
    Pack<T> p[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (j + u * kThreads < sp.nvec) p[u] = load_word(in + j + u * kThreads);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t k = j + u * kThreads;
      if (k < sp.nvec) {
        const int64_t i0 = sp.head + k * kN;
#pragma unroll
        for (int e = 0; e < kN; ++e)
          p[u].v[e] = from_f<T>(grad_of(to_f(p[u].v[e]), lse, grad_scale, i0 + e == t));
        store_word(out + k, p[u]);
      }
    }
  }
  for (int64_t i = sp.tail0 + tid; i < V; i += kThreads)
    d[i] = from_f<T>(grad_of(to_f(x[i]), lse, grad_scale, i == t));
}

template <typename T>
__device__ void row_zero(T* d, int64_t V) {
  const RowSplit sp = split_row(d, V);
  const int64_t tid = threadIdx.x;
  const T zero = from_f<T>(0.f);
  if (tid < sp.head) d[tid] = zero;
  Pack<T> z;
#pragma unroll
  for (int e = 0; e < Pack<T>::kSize; ++e)
    z.v[e] = zero;
  Pack<T>* out = reinterpret_cast<Pack<T>*>(d + sp.head);
  for (int64_t j = tid; j < sp.nvec; j += kThreads)
    store_word(out + j, z);
  for (int64_t i = sp.tail0 + tid; i < V; i += kThreads)
    d[i] = zero;
}

template <typename I>
__device__ __forceinline__ bool in_range(I t, int64_t V) {
  return static_cast<int64_t>(t) >= 0 && static_cast<int64_t>(t) < V;
}

template <typename T, typename I>
__global__ void __launch_bounds__(kThreads)
    forward_kernel(const T* __restrict__ logits, const I* __restrict__ targets,
                   float* __restrict__ losses, float* __restrict__ lse, int64_t V,
                   int64_t ignore_index) {
  __shared__ Stats smem[kWarps + 1];
  const int64_t n = blockIdx.x;
  const int64_t t = static_cast<int64_t>(targets[n]);
  if (t == ignore_index) {
    if (threadIdx.x == 0) {
      losses[n] = 0.f;
      lse[n] = 0.f;
    }
    return;
  }
  const T* row = logits + n * V;
  const float l = row_logsumexp(row, V, smem);
  if (threadIdx.x == 0) {
    lse[n] = l;
    losses[n] = in_range(t, V) ? __fsub_rn(l, to_f(row[t])) : NAN;
  }
}

// logits and dlogits may alias: no __restrict__ on them.
template <typename T, typename I>
__global__ void __launch_bounds__(kThreads)
    backward_kernel(const T* logits, const I* __restrict__ targets, const float* __restrict__ lse,
                    T* dlogits, float grad_scale, int64_t V, int64_t ignore_index) {
  const int64_t n = blockIdx.x;
  const int64_t t = static_cast<int64_t>(targets[n]);
  T* d = dlogits + n * V;
  if (t == ignore_index) {
    row_zero(d, V);
    return;
  }
  const bool ok = in_range(t, V);
  row_gradient(logits + n * V, d, V, ok ? lse[n] : NAN, grad_scale, ok ? t : -1);
}

template <typename T, typename I>
__global__ void __launch_bounds__(kThreads)
    fused_kernel(T* logits, const I* __restrict__ targets, float* __restrict__ losses,
                 float grad_scale, int64_t V, int64_t ignore_index) {
  __shared__ Stats smem[kWarps + 1];
  const int64_t n = blockIdx.x;
  const int64_t t = static_cast<int64_t>(targets[n]);
  T* row = logits + n * V;
  if (t == ignore_index) {
    if (threadIdx.x == 0) losses[n] = 0.f;
    row_zero(row, V);
    return;
  }
  const bool ok = in_range(t, V);
  // The target logit is read before the block barrier inside row_logsumexp; after it, the row
  // is overwritten.
  const float xt = (threadIdx.x == 0 && ok) ? to_f(row[t]) : 0.f;
  const float l = row_logsumexp(row, V, smem);
  if (threadIdx.x == 0) losses[n] = ok ? __fsub_rn(l, xt) : NAN;
  row_gradient(row, row, V, ok ? l : NAN, grad_scale, ok ? t : -1);
}

unsigned int grid_for(std::string_view op, int64_t N) {
  if (N > std::numeric_limits<int32_t>::max())
    throw ShapeError(op, str(N, " rows exceed the CUDA grid limit of 2^31 - 1"));
  return static_cast<unsigned int>(N);
}

// Runs f.template operator()<T, I>() for the logits' element type and the targets' index type.
template <typename F>
void dispatch(std::string_view op, DType logits, DType targets, F&& f) {
  ZT_DISPATCH_FLOAT(logits, op, T, {
    if (targets == DType::i32)
      f.template operator()<T, int32_t>();
    else
      f.template operator()<T, int64_t>();
  });
}

}  // namespace

void cross_entropy_forward(const Tensor& logits, const Tensor& targets, Tensor& losses, Tensor& lse,
                           int64_t ignore_index, Stream stream) {
  constexpr std::string_view op = "cross_entropy_forward";
  const int64_t V = logits.size(1);
  const unsigned int grid = grid_for(op, logits.size(0));
  CudaDeviceGuard guard(logits.device());
  dispatch(op, logits.dtype(), targets.dtype(), [&]<typename T, typename I>() {
    forward_kernel<T, I><<<grid, kThreads, 0, to_cuda(stream)>>>(
        static_cast<const T*>(logits.data()), static_cast<const I*>(targets.data()),
        losses.data_as<float>(), lse.data_as<float>(), V, ignore_index);
  });
  ZT_CUDA_CHECK_LAUNCH();
}

void cross_entropy_backward(const Tensor& logits, const Tensor& targets, const Tensor& lse,
                            Tensor& dlogits, float grad_scale, int64_t ignore_index,
                            Stream stream) {
  constexpr std::string_view op = "cross_entropy_backward";
  const int64_t V = logits.size(1);
  const unsigned int grid = grid_for(op, logits.size(0));
  CudaDeviceGuard guard(logits.device());
  dispatch(op, logits.dtype(), targets.dtype(), [&]<typename T, typename I>() {
    backward_kernel<T, I><<<grid, kThreads, 0, to_cuda(stream)>>>(
        static_cast<const T*>(logits.data()), static_cast<const I*>(targets.data()),
        lse.data_as<float>(), static_cast<T*>(dlogits.data()), grad_scale, V, ignore_index);
  });
  ZT_CUDA_CHECK_LAUNCH();
}

void cross_entropy_fused(Tensor& logits, const Tensor& targets, Tensor& losses, float grad_scale,
                         int64_t ignore_index, Stream stream) {
  constexpr std::string_view op = "cross_entropy_fused";
  const int64_t V = logits.size(1);
  const unsigned int grid = grid_for(op, logits.size(0));
  CudaDeviceGuard guard(logits.device());
  dispatch(op, logits.dtype(), targets.dtype(), [&]<typename T, typename I>() {
    fused_kernel<T, I><<<grid, kThreads, 0, to_cuda(stream)>>>(
        static_cast<T*>(logits.data()), static_cast<const I*>(targets.data()),
        losses.data_as<float>(), grad_scale, V, ignore_index);
  });
  ZT_CUDA_CHECK_LAUNCH();
}

}  // namespace zt::kernels::cuda
