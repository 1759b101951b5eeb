// Tensor-core attention forward for f16/bf16 (FlashAttention-2 scheme). One block of 8 warps per
// (128-query tile, head, batch); each warp owns 16 query rows. The block walks the key tiles (64
// keys) that its rows can see, double-buffered through cp.async, and for each computes
// S = Q K^T (mma.sync, f32 accumulation), the online softmax in registers, and O += P V with P
// rounded to the input type. The S x S matrix is never stored; out and lse are written at the end.
// Tested by tests/kernels/test_attention_cuda.cpp against the CPU kernel.
#include <cmath>

#include "zerotrain/core/cuda/cuda_check.h"
#include "zerotrain/kernels/cuda/attention_launch.h"
#include "zerotrain/kernels/cuda/attention_mma.cuh"

namespace zt::kernels::cuda::attn {

namespace {

constexpr int kFwdBlockM = 128;  // queries per block
constexpr int kFwdBlockN = 64;   // keys per tile
constexpr int kFwdWarps = kFwdBlockM / 16;
constexpr int kFwdThreads = kFwdWarps * 32;

template <typename T, int D>
constexpr size_t fwd_smem_bytes() {
  return static_cast<size_t>(kFwdBlockM + 4 * kFwdBlockN) * HeadDim<D>::kPitch * sizeof(T);
}

// Two blocks per SM (registers capped at 128; a few bytes spill at D >= 80) measured ~12% faster
// on an H200 than one block with 140 registers.
template <typename T, int D>
__global__ void __launch_bounds__(kFwdThreads, 2) attention_fwd_kernel(FwdArgs p) {
  using HD = HeadDim<D>;
  constexpr int BM = kFwdBlockM, BN = kFwdBlockN, P = HD::kPitch;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* qs = reinterpret_cast<T*>(smem_raw);  // [BM][P]
  T* ks = qs + BM * P;                     // [2][BN][P]
  T* vs = ks + 2 * BN * P;                 // [2][BN][P]

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int m0 = (gridDim.x - 1 - blockIdx.x) * BM;  // heaviest (last) query tiles start first
  const int h = blockIdx.y, b = blockIdx.z, kvh = h / (p.Hq / p.Hkv);
  const int S = p.S, W = p.window;
  const int64_t q_ld = static_cast<int64_t>(p.Hq) * D, kv_ld = static_cast<int64_t>(p.Hkv) * D;
  const T* qg = static_cast<const T*>(p.q) + (static_cast<int64_t>(b) * S * p.Hq + h) * D;
  const T* kg = static_cast<const T*>(p.k) + (static_cast<int64_t>(b) * S * p.Hkv + kvh) * D;
  const T* vg = static_cast<const T*>(p.v) + (static_cast<int64_t>(b) * S * p.Hkv + kvh) * D;

  // Keys seen by any row of the block: [n_begin, n_end).
  const int n_begin = W > 0 ? max(0, m0 - W + 1) : 0;
  const int n_end = min(S, m0 + BM);
  const int t_begin = n_begin / BN, t_end = (n_end + BN - 1) / BN;

  load_tile<T, D, BM, kFwdThreads>(qs, qg, q_ld, m0, S, tid);
  load_tile<T, D, BN, kFwdThreads>(ks, kg, kv_ld, t_begin * BN, S, tid);
  load_tile<T, D, BN, kFwdThreads>(vs, vg, kv_ld, t_begin * BN, S, tid);
  cp_async_commit();

  const int g = lane >> 2, t = lane & 3;
  const int wr0 = m0 + warp * 16;  // the warp's first query row
  const int rows[2] = {wr0 + g, wr0 + g + 8};
  const float scale_log2 = p.scale * kLog2e;

  float o[HD::kNTiles][4];
#pragma unroll
  for (int i = 0; i < HD::kNTiles; ++i)
    o[i][0] = o[i][1] = o[i][2] = o[i][3] = 0.f;
  float mx[2] = {-INFINITY, -INFINITY};  // running row max of the log2-scaled scores
  float l[2] = {0.f, 0.f};               // this thread's part of the running row sum

  for (int tile = t_begin; tile < t_end; ++tile) {
    const int buf = (tile - t_begin) & 1;
    if (tile + 1 < t_end) {
      load_tile<T, D, BN, kFwdThreads>(ks + (buf ^ 1) * BN * P, kg, kv_ld, (tile + 1) * BN, S, tid);
      load_tile<T, D, BN, kFwdThreads>(vs + (buf ^ 1) * BN * P, vg, kv_ld, (tile + 1) * BN, S, tid);
      cp_async_commit();
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();

    const int n0 = tile * BN;
    const T* kt = ks + buf * BN * P;
    const T* vt = vs + buf * BN * P;
    // A warp none of whose rows sees this tile leaves its state as is.
    const bool skip = n0 > wr0 + 15 || (W > 0 && wr0 - (n0 + BN - 1) >= W);
    if (!skip) {
      float s[BN / 8][4];
#pragma unroll
      for (int i = 0; i < BN / 8; ++i)
        s[i][0] = s[i][1] = s[i][2] = s[i][3] = 0.f;
#pragma unroll
      for (int kk = 0; kk < HD::kKSteps; ++kk) {
        uint32_t a[4];
        load_a<T, P>(a, qs, warp * 16, kk * 16, lane);
#pragma unroll
        for (int np = 0; np < BN / 16; ++np) {
          uint32_t bb[4];
          load_b_nk<T, P>(bb, kt, np * 16, kk * 16, lane);
          mma<T>(s[2 * np], a, bb);
          mma<T>(s[2 * np + 1], a, bb + 2);
        }
      }

      // Masking is needed only where some (row, key) pair of the warp's tile is invisible (in
      // packed rows, anywhere).
      const bool need_mask =
          n0 + BN - 1 > wr0 || (W > 0 && wr0 + 15 - n0 >= W) || p.doc_starts != nullptr;
#pragma unroll
      for (int nt = 0; nt < BN / 8; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          s[nt][e] *= scale_log2;
          const int key = n0 + nt * 8 + 2 * t + (e & 1);
          if (need_mask && (!visible(rows[e >> 1], key, W) ||
                            before_document(p.doc_starts, b, S, rows[e >> 1], key)))
            s[nt][e] = -INFINITY;
        }

        // Online softmax; the four lanes of a row (same g) share its max through shuffles.
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        float tmax = -INFINITY;
#pragma unroll
        for (int nt = 0; nt < BN / 8; ++nt)
          tmax = fmaxf(tmax, fmaxf(s[nt][2 * r], s[nt][2 * r + 1]));
        tmax = fmaxf(tmax, __shfl_xor_sync(0xffffffffu, tmax, 1));
        tmax = fmaxf(tmax, __shfl_xor_sync(0xffffffffu, tmax, 2));
        const float m_new = fmaxf(mx[r], tmax);
        const float m_use = m_new == -INFINITY ? 0.f : m_new;  // a row that has seen no key yet
        const float alpha = fast_exp2(mx[r] - m_use);
        mx[r] = m_new;
        float sum = 0.f;
#pragma unroll
        for (int nt = 0; nt < BN / 8; ++nt) {
          s[nt][2 * r] = fast_exp2(s[nt][2 * r] - m_use);
          s[nt][2 * r + 1] = fast_exp2(s[nt][2 * r + 1] - m_use);
          sum += s[nt][2 * r] + s[nt][2 * r + 1];
        }
        l[r] = l[r] * alpha + sum;
#pragma unroll
        for (int dn = 0; dn < HD::kNTiles; ++dn) {
          o[dn][2 * r] *= alpha;
          o[dn][2 * r + 1] *= alpha;
        }
      }

      // O += P V: the probability tiles are the A operands (see [Note: mma fragments]).
#pragma unroll
      for (int kk = 0; kk < BN / 16; ++kk) {
        uint32_t a[4];
        acc_to_a<T>(a, s[2 * kk], s[2 * kk + 1]);
#pragma unroll
        for (int dp = 0; dp < D / 16; ++dp) {
          uint32_t bb[4];
          load_b_kn<T, P>(bb, vt, kk * 16, dp * 16, lane);
          mma<T>(o[2 * dp], a, bb);
          mma<T>(o[2 * dp + 1], a, bb + 2);
        }
      }
    }
    __syncthreads();  // the buffer just read is refilled by the next iteration's prefetch
  }

  T* og = static_cast<T*>(p.out);
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float lt = l[r];
    lt += __shfl_xor_sync(0xffffffffu, lt, 1);
    lt += __shfl_xor_sync(0xffffffffu, lt, 2);
    const int i = rows[r];
    if (i >= S) continue;
    const float inv = 1.f / lt;  // lt > 0: a row always sees its own key
    T* orow = og + ((static_cast<int64_t>(b) * S + i) * p.Hq + h) * D;
#pragma unroll
    for (int dn = 0; dn < HD::kNTiles; ++dn)
      *reinterpret_cast<uint32_t*>(orow + dn * 8 + 2 * t) =
          pack2<T>(o[dn][2 * r] * inv, o[dn][2 * r + 1] * inv);
    if (t == 0) p.lse[(static_cast<int64_t>(b) * p.Hq + h) * S + i] = (mx[r] + log2f(lt)) * kLn2;
  }
}

template <typename T, int D>
void launch_forward(const FwdArgs& a, Stream stream) {
  constexpr size_t smem = fwd_smem_bytes<T, D>();
  auto kernel = attention_fwd_kernel<T, D>;
  ZT_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     static_cast<int>(smem)));
  const dim3 grid((a.S + kFwdBlockM - 1) / kFwdBlockM, a.Hq, a.B);
  kernel<<<grid, kFwdThreads, smem, to_cuda(stream)>>>(a);
  ZT_CUDA_CHECK_LAUNCH();
}

}  // namespace

void forward_tensor_core(const FwdArgs& a, DType dtype, Stream stream) {
  with_half_type("attention_forward", dtype, [&](auto tv) {
    using T = decltype(tv);
    with_head_dim("attention_forward", a.D,
                  [&](auto dv) { launch_forward<T, decltype(dv)::value>(a, stream); });
  });
}

}  // namespace zt::kernels::cuda::attn
