// Tensor-core attention backward, dQ, for f16/bf16. One block of 4 warps per (64-query tile, head,
// batch); each warp owns 16 query rows and keeps their dQ in f32 registers. The block walks the key
// tiles (64 keys) its rows see, double-buffered through cp.async, and per tile recomputes
//   P = exp2(Q K^T scale log2e - lse log2e),  dP = dO V^T,  dS = P (dP - D),  dQ += dS K.
// No atomics: bitwise reproducible. Tested by tests/kernels/test_attention_cuda.cpp.
#include <cmath>

#include "zerotrain/core/cuda/cuda_check.h"
#include "zerotrain/kernels/cuda/attention_launch.h"
#include "zerotrain/kernels/cuda/attention_mma.cuh"

namespace zt::kernels::cuda::attn {

namespace {

constexpr int kDqBlockM = 64;  // queries per block
constexpr int kDqBlockN = 64;  // keys per tile
constexpr int kDqWarps = kDqBlockM / 16;
constexpr int kDqThreads = kDqWarps * 32;

template <typename T, int D>
constexpr size_t dq_smem_bytes() {
  return static_cast<size_t>(2 * kDqBlockM + 4 * kDqBlockN) * HeadDim<D>::kPitch * sizeof(T);
}

template <typename T, int D>
__global__ void __launch_bounds__(kDqThreads) attention_bwd_dq_kernel(BwdArgs p) {
  using HD = HeadDim<D>;
  constexpr int BM = kDqBlockM, BN = kDqBlockN, P = HD::kPitch;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* qs = reinterpret_cast<T*>(smem_raw);  // [BM][P]
  T* dos = qs + BM * P;                    // [BM][P]
  T* ks = dos + BM * P;                    // [2][BN][P]
  T* vs = ks + 2 * BN * P;                 // [2][BN][P]

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int m0 = (gridDim.x - 1 - blockIdx.x) * BM;  // heaviest (last) query tiles start first
  const int h = blockIdx.y, b = blockIdx.z, kvh = h / (p.Hq / p.Hkv);
  const int S = p.S, W = p.window;
  const int64_t q_ld = static_cast<int64_t>(p.Hq) * D, kv_ld = static_cast<int64_t>(p.Hkv) * D;
  const int64_t q_off = (static_cast<int64_t>(b) * S * p.Hq + h) * D;
  const int64_t kv_off = (static_cast<int64_t>(b) * S * p.Hkv + kvh) * D;
  const T* kg = static_cast<const T*>(p.k) + kv_off;
  const T* vg = static_cast<const T*>(p.v) + kv_off;

  const int n_begin = W > 0 ? max(0, m0 - W + 1) : 0;
  const int n_end = min(S, m0 + BM);
  const int t_begin = n_begin / BN, t_end = (n_end + BN - 1) / BN;

  load_tile<T, D, BM, kDqThreads>(qs, static_cast<const T*>(p.q) + q_off, q_ld, m0, S, tid);
  load_tile<T, D, BM, kDqThreads>(dos, static_cast<const T*>(p.dout) + q_off, q_ld, m0, S, tid);
  load_tile<T, D, BN, kDqThreads>(ks, kg, kv_ld, t_begin * BN, S, tid);
  load_tile<T, D, BN, kDqThreads>(vs, vg, kv_ld, t_begin * BN, S, tid);
  cp_async_commit();

  const int g = lane >> 2, t = lane & 3;
  const int wr0 = m0 + warp * 16;
  const int rows[2] = {wr0 + g, wr0 + g + 8};
  const float scale_log2 = p.scale * kLog2e;
  float lse2[2], dd[2];  // per row: lse in log2 units and D; padding rows get P = 0
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int64_t stat = (static_cast<int64_t>(b) * p.Hq + h) * S + rows[r];
    lse2[r] = rows[r] < S ? p.lse[stat] * kLog2e : INFINITY;
    dd[r] = rows[r] < S ? p.dd[stat] : 0.f;
  }

  float dq[HD::kNTiles][4];
#pragma unroll
  for (int i = 0; i < HD::kNTiles; ++i)
    dq[i][0] = dq[i][1] = dq[i][2] = dq[i][3] = 0.f;

  for (int tile = t_begin; tile < t_end; ++tile) {
    const int buf = (tile - t_begin) & 1;
    if (tile + 1 < t_end) {
      load_tile<T, D, BN, kDqThreads>(ks + (buf ^ 1) * BN * P, kg, kv_ld, (tile + 1) * BN, S, tid);
      load_tile<T, D, BN, kDqThreads>(vs + (buf ^ 1) * BN * P, vg, kv_ld, (tile + 1) * BN, S, tid);
      cp_async_commit();
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();

    const int n0 = tile * BN;
    const T* kt = ks + buf * BN * P;
    const T* vt = vs + buf * BN * P;
    const bool skip = n0 > wr0 + 15 || (W > 0 && wr0 - (n0 + BN - 1) >= W);
    if (!skip) {
      float s[BN / 8][4], dp[BN / 8][4];
#pragma unroll
      for (int i = 0; i < BN / 8; ++i)
#pragma unroll
        for (int e = 0; e < 4; ++e)
          s[i][e] = dp[i][e] = 0.f;
#pragma unroll
      for (int kk = 0; kk < HD::kKSteps; ++kk) {
        uint32_t a[4], ga[4];
        load_a<T, P>(a, qs, warp * 16, kk * 16, lane);
        load_a<T, P>(ga, dos, warp * 16, kk * 16, lane);
#pragma unroll
        for (int np = 0; np < BN / 16; ++np) {
          uint32_t bk[4], bv[4];
          load_b_nk<T, P>(bk, kt, np * 16, kk * 16, lane);
          load_b_nk<T, P>(bv, vt, np * 16, kk * 16, lane);
          mma<T>(s[2 * np], a, bk);
          mma<T>(s[2 * np + 1], a, bk + 2);
          mma<T>(dp[2 * np], ga, bv);
          mma<T>(dp[2 * np + 1], ga, bv + 2);
        }
      }

      // dS = P (dP - D), stored over dP.
      const bool need_mask =
          n0 + BN - 1 > wr0 || (W > 0 && wr0 + 15 - n0 >= W) || p.doc_starts != nullptr;
#pragma unroll
      for (int nt = 0; nt < BN / 8; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int r = e >> 1;
          const int key = n0 + nt * 8 + 2 * t + (e & 1);
          float pv = fast_exp2(s[nt][e] * scale_log2 - lse2[r]);
          if (need_mask &&
              (!visible(rows[r], key, W) || before_document(p.doc_starts, b, S, rows[r], key)))
            pv = 0.f;
          dp[nt][e] = pv * (dp[nt][e] - dd[r]);
        }

        // dQ += dS K (the scale is applied once at the end).
#pragma unroll
      for (int kk = 0; kk < BN / 16; ++kk) {
        uint32_t a[4];
        acc_to_a<T>(a, dp[2 * kk], dp[2 * kk + 1]);
#pragma unroll
        for (int dn = 0; dn < D / 16; ++dn) {
          uint32_t bb[4];
          load_b_kn<T, P>(bb, kt, kk * 16, dn * 16, lane);
          mma<T>(dq[2 * dn], a, bb);
          mma<T>(dq[2 * dn + 1], a, bb + 2);
        }
      }
    }
    __syncthreads();
  }

  T* dqg = static_cast<T*>(p.dq) + q_off;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int i = rows[r];
    if (i >= S) continue;
#pragma unroll
    for (int dn = 0; dn < HD::kNTiles; ++dn)
      *reinterpret_cast<uint32_t*>(dqg + i * q_ld + dn * 8 + 2 * t) =
          pack2<T>(dq[dn][2 * r] * p.scale, dq[dn][2 * r + 1] * p.scale);
  }
}

template <typename T, int D>
void launch_dq(const BwdArgs& a, Stream stream) {
  constexpr size_t smem = dq_smem_bytes<T, D>();
  auto kernel = attention_bwd_dq_kernel<T, D>;
  ZT_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     static_cast<int>(smem)));
  const dim3 grid((a.S + kDqBlockM - 1) / kDqBlockM, a.Hq, a.B);
  kernel<<<grid, kDqThreads, smem, to_cuda(stream)>>>(a);
  ZT_CUDA_CHECK_LAUNCH();
}

}  // namespace

void backward_dq_tensor_core(const BwdArgs& a, DType dtype, Stream stream) {
  with_half_type("attention_backward", dtype, [&](auto tv) {
    using T = decltype(tv);
    with_head_dim("attention_backward", a.D,
                  [&](auto dv) { launch_dq<T, decltype(dv)::value>(a, stream); });
  });
}

}  // namespace zt::kernels::cuda::attn
