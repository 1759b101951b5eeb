// f32 attention on CUDA cores: one warp per output row, the same row-wise scheme as the CPU kernel.
//   forward, per query row:  lanes score 32 keys at a time, online softmax, lanes own D columns of
//                            the output (acc += p_j v_j with p_j broadcast by shuffle);
//   dq, per query row:       ds_j = p_j (dO.v_j - D), dq += ds_j k_j;
//   dk/dv, per key row:      over the group's query heads and the queries that see the key,
//                            dv += p dO_i, dk += ds q_i.
// The row's own vectors sit in shared memory; the other operand rows are read through L1/L2.
// Simple rather than fast (f16/bf16 use the tensor-core kernels). Deterministic: one writer per
// row, fixed shuffle trees. Tested by tests/kernels/test_attention_cuda.cpp.
#include <cmath>

#include "zerotrain/core/cuda/cuda_check.h"
#include "zerotrain/core/cuda/dispatch.cuh"
#include "zerotrain/kernels/cuda/attention_launch.h"
#include "zerotrain/kernels/cuda/attention_mma.cuh"

namespace zt::kernels::cuda::attn {

namespace {

constexpr int kWarps = 8;   // rows per block
constexpr int kMaxD = 128;  // largest supported head dim
constexpr int kPerLane = kMaxD / 32;

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// a (shared) . b (global, 16-byte aligned), D a multiple of 4.
__device__ __forceinline__ float dot_row(const float* a, const float* b, int D) {
  float s = 0.f;
  for (int d = 0; d < D; d += 4) {
    const float4 x = *reinterpret_cast<const float4*>(b + d);
    s += a[d] * x.x + a[d + 1] * x.y + a[d + 2] * x.z + a[d + 3] * x.w;
  }
  return s;
}

// The first key query i of row b sees: the window's bound and, in packed rows, its document's
// start.
__device__ __forceinline__ int first_key(int window, const int* doc_starts, int b, int S, int i) {
  const int lo = window > 0 ? max(0, i - window + 1) : 0;
  return doc_starts != nullptr ? max(lo, doc_starts[static_cast<int64_t>(b) * S + i]) : lo;
}

__device__ __forceinline__ void copy_row(float* dst, const float* src, int D, int lane) {
  for (int d = lane; d < D; d += 32)
    dst[d] = src[d];
  __syncwarp();
}

__global__ void __launch_bounds__(kWarps * 32) forward_f32_kernel(FwdArgs p) {
  __shared__ float q_s[kWarps][kMaxD];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarps + warp;  // (b, h, i), i fastest
  if (row >= static_cast<int64_t>(p.B) * p.Hq * p.S) return;
  const int S = p.S, D = p.D, i = static_cast<int>(row % S);
  const int h = static_cast<int>((row / S) % p.Hq), b = static_cast<int>(row / S / p.Hq);
  const int kvh = h / (p.Hq / p.Hkv);
  const int64_t kv_ld = static_cast<int64_t>(p.Hkv) * D;
  const int64_t q_at = ((static_cast<int64_t>(b) * S + i) * p.Hq + h) * D;
  const float* kb =
      static_cast<const float*>(p.k) + (static_cast<int64_t>(b) * S * p.Hkv + kvh) * D;
  const float* vb =
      static_cast<const float*>(p.v) + (static_cast<int64_t>(b) * S * p.Hkv + kvh) * D;
  float* qr = q_s[warp];
  copy_row(qr, static_cast<const float*>(p.q) + q_at, D, lane);

  float m = -INFINITY, l = 0.f, acc[kPerLane] = {};
  for (int j0 = first_key(p.window, p.doc_starts, b, S, i); j0 <= i; j0 += 32) {
    const int j = j0 + lane;
    const float s = j <= i ? dot_row(qr, kb + j * kv_ld, D) * p.scale : -INFINITY;
    const float m_new = fmaxf(m, warp_max(s));  // finite: key j0 is visible
    const float alpha = expf(m - m_new);
    const float pj = j <= i ? expf(s - m_new) : 0.f;
    l = l * alpha + warp_sum(pj);
    m = m_new;
#pragma unroll
    for (int c = 0; c < kPerLane; ++c)
      acc[c] *= alpha;
    const int n = min(32, i - j0 + 1);
    for (int jj = 0; jj < n; ++jj) {
      const float pb = __shfl_sync(0xffffffffu, pj, jj);
      const float* vr = vb + (j0 + jj) * kv_ld;
#pragma unroll
      for (int c = 0; c < kPerLane; ++c)
        if (lane + 32 * c < D) acc[c] += pb * vr[lane + 32 * c];
    }
  }
  float* orow = static_cast<float*>(p.out) + q_at;
#pragma unroll
  for (int c = 0; c < kPerLane; ++c)
    if (lane + 32 * c < D) orow[lane + 32 * c] = acc[c] / l;
  if (lane == 0) p.lse[(static_cast<int64_t>(b) * p.Hq + h) * S + i] = m + logf(l);
}

__global__ void __launch_bounds__(kWarps * 32) backward_dq_f32_kernel(BwdArgs p) {
  __shared__ float q_s[kWarps][kMaxD], do_s[kWarps][kMaxD];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarps + warp;  // (b, h, i), i fastest
  if (row >= static_cast<int64_t>(p.B) * p.Hq * p.S) return;
  const int S = p.S, D = p.D, i = static_cast<int>(row % S);
  const int h = static_cast<int>((row / S) % p.Hq), b = static_cast<int>(row / S / p.Hq);
  const int kvh = h / (p.Hq / p.Hkv);
  const int64_t kv_ld = static_cast<int64_t>(p.Hkv) * D;
  const int64_t q_at = ((static_cast<int64_t>(b) * S + i) * p.Hq + h) * D;
  const float* kb =
      static_cast<const float*>(p.k) + (static_cast<int64_t>(b) * S * p.Hkv + kvh) * D;
  const float* vb =
      static_cast<const float*>(p.v) + (static_cast<int64_t>(b) * S * p.Hkv + kvh) * D;
  float* qr = q_s[warp];
  float* dor = do_s[warp];
  copy_row(qr, static_cast<const float*>(p.q) + q_at, D, lane);
  copy_row(dor, static_cast<const float*>(p.dout) + q_at, D, lane);
  const int64_t stat = (static_cast<int64_t>(b) * p.Hq + h) * S + i;
  const float lse = p.lse[stat], dd = p.dd[stat];

  float acc[kPerLane] = {};
  for (int j0 = first_key(p.window, p.doc_starts, b, S, i); j0 <= i; j0 += 32) {
    const int j = j0 + lane;
    float ds = 0.f;
    if (j <= i) {
      const float pj = expf(dot_row(qr, kb + j * kv_ld, D) * p.scale - lse);
      ds = pj * (dot_row(dor, vb + j * kv_ld, D) - dd);
    }
    const int n = min(32, i - j0 + 1);
    for (int jj = 0; jj < n; ++jj) {
      const float db = __shfl_sync(0xffffffffu, ds, jj);
      const float* kr = kb + (j0 + jj) * kv_ld;
#pragma unroll
      for (int c = 0; c < kPerLane; ++c)
        if (lane + 32 * c < D) acc[c] += db * kr[lane + 32 * c];
    }
  }
  float* dq = static_cast<float*>(p.dq) + q_at;
#pragma unroll
  for (int c = 0; c < kPerLane; ++c)
    if (lane + 32 * c < D) dq[lane + 32 * c] = acc[c] * p.scale;
}

__global__ void __launch_bounds__(kWarps * 32) backward_dkdv_f32_kernel(BwdArgs p) {
  __shared__ float k_s[kWarps][kMaxD], v_s[kWarps][kMaxD];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int64_t row =
      static_cast<int64_t>(blockIdx.x) * kWarps + warp;  // (b, kv head, j), j fastest
  if (row >= static_cast<int64_t>(p.B) * p.Hkv * p.S) return;
  const int S = p.S, D = p.D, j = static_cast<int>(row % S);
  const int kvh = static_cast<int>((row / S) % p.Hkv), b = static_cast<int>(row / S / p.Hkv);
  const int G = p.Hq / p.Hkv;
  const int64_t q_ld = static_cast<int64_t>(p.Hq) * D;
  const int64_t kv_at = ((static_cast<int64_t>(b) * S + j) * p.Hkv + kvh) * D;
  float* kr = k_s[warp];
  float* vr = v_s[warp];
  copy_row(kr, static_cast<const float*>(p.k) + kv_at, D, lane);
  copy_row(vr, static_cast<const float*>(p.v) + kv_at, D, lane);
  const int last = p.window > 0 ? min(S - 1, j + p.window - 1) : S - 1;

  float acc_k[kPerLane] = {}, acc_v[kPerLane] = {};
  for (int h = kvh * G; h < (kvh + 1) * G; ++h) {
    const int64_t q_base = (static_cast<int64_t>(b) * S * p.Hq + h) * D;
    const float* qb = static_cast<const float*>(p.q) + q_base;
    const float* gb = static_cast<const float*>(p.dout) + q_base;
    const int64_t stat = (static_cast<int64_t>(b) * p.Hq + h) * S;
    for (int i0 = j; i0 <= last; i0 += 32) {
      const int i = i0 + lane;
      float pi = 0.f, ds = 0.f;
      if (i <= last && !before_document(p.doc_starts, b, S, i, j)) {
        pi = expf(dot_row(kr, qb + i * q_ld, D) * p.scale - p.lse[stat + i]);
        ds = pi * (dot_row(vr, gb + i * q_ld, D) - p.dd[stat + i]);
      }
      const int n = min(32, last - i0 + 1);
      for (int ii = 0; ii < n; ++ii) {
        const float pb = __shfl_sync(0xffffffffu, pi, ii);
        const float db = __shfl_sync(0xffffffffu, ds, ii);
        const float* qrow = qb + (i0 + ii) * q_ld;
        const float* grow = gb + (i0 + ii) * q_ld;
#pragma unroll
        for (int c = 0; c < kPerLane; ++c)
          if (lane + 32 * c < D) {
            acc_v[c] += pb * grow[lane + 32 * c];
            acc_k[c] += db * qrow[lane + 32 * c];
          }
      }
    }
  }
  float* dk = static_cast<float*>(p.dk) + kv_at;
  float* dv = static_cast<float*>(p.dv) + kv_at;
#pragma unroll
  for (int c = 0; c < kPerLane; ++c)
    if (lane + 32 * c < D) {
      dk[lane + 32 * c] = acc_k[c] * p.scale;
      dv[lane + 32 * c] = acc_v[c];
    }
}

}  // namespace

void forward_f32(const FwdArgs& a, Stream stream) {
  const long long rows = static_cast<long long>(a.B) * a.Hq * a.S;
  forward_f32_kernel<<<zt::dev::blocks_for(rows, kWarps, (1LL << 31) - 1), kWarps * 32, 0,
                       to_cuda(stream)>>>(a);
  ZT_CUDA_CHECK_LAUNCH();
}

void backward_f32(const BwdArgs& a, Stream stream) {
  const long long q_rows = static_cast<long long>(a.B) * a.Hq * a.S;
  const long long kv_rows = static_cast<long long>(a.B) * a.Hkv * a.S;
  backward_dq_f32_kernel<<<zt::dev::blocks_for(q_rows, kWarps, (1LL << 31) - 1), kWarps * 32, 0,
                           to_cuda(stream)>>>(a);
  ZT_CUDA_CHECK_LAUNCH();
  backward_dkdv_f32_kernel<<<zt::dev::blocks_for(kv_rows, kWarps, (1LL << 31) - 1), kWarps * 32, 0,
                             to_cuda(stream)>>>(a);
  ZT_CUDA_CHECK_LAUNCH();
}

}  // namespace zt::kernels::cuda::attn
