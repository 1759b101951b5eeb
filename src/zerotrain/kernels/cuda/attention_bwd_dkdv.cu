// Tensor-core attention backward, dK and dV, for f16/bf16. One block of 4 warps per (64-key tile,
// kv head, batch); each warp owns 16 keys and keeps their dK, dV in f32 registers. The block walks
// every query head of the group and every 32-query tile that sees its keys (Q, dO, lse and D
// double-buffered through cp.async) and, per tile, recomputes the transposed probabilities
//   P^T = exp2(K Q^T scale log2e - lse log2e),  dP^T = V dO^T,  dS^T = P^T (dP^T - D),
// then dV += P^T dO and dK += dS^T Q. Each dK/dV element has one owner and a fixed order of
// additions: no atomics, bitwise reproducible. Tested by tests/kernels/test_attention_cuda.cpp.
#include <cmath>

#include "zerotrain/core/cuda/cuda_check.h"
#include "zerotrain/kernels/cuda/attention_launch.h"
#include "zerotrain/kernels/cuda/attention_mma.cuh"

namespace zt::kernels::cuda::attn {

namespace {

constexpr int kKvBlockN = 64;  // keys per block
constexpr int kKvBlockM = 32;  // queries per step
constexpr int kKvWarps = kKvBlockN / 16;
constexpr int kKvThreads = kKvWarps * 32;

// Blocks per SM the register allocation aims at: small head dims fit three (measured faster on an
// H200); D = 128 needs the full 255 registers (two blocks).
constexpr int kv_min_blocks(int d) {
  return d <= 64 ? 3 : 1;
}

template <typename T, int D>
constexpr size_t dkdv_smem_bytes() {
  return static_cast<size_t>(2 * kKvBlockN + 4 * kKvBlockM) * HeadDim<D>::kPitch * sizeof(T) +
         4 * kKvBlockM * sizeof(float);
}

template <typename T, int D>
__global__ void __launch_bounds__(kKvThreads, kv_min_blocks(D))
    attention_bwd_dkdv_kernel(BwdArgs p) {
  using HD = HeadDim<D>;
  constexpr int BN = kKvBlockN, BM = kKvBlockM, P = HD::kPitch;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* ks = reinterpret_cast<T*>(smem_raw);                     // [BN][P]
  T* vs = ks + BN * P;                                        // [BN][P]
  T* qs = vs + BN * P;                                        // [2][BM][P]
  T* dos = qs + 2 * BM * P;                                   // [2][BM][P]
  float* lse_s = reinterpret_cast<float*>(dos + 2 * BM * P);  // [2][BM]
  float* dd_s = lse_s + 2 * BM;                               // [2][BM]

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int n0 = blockIdx.x * BN, kvh = blockIdx.y, b = blockIdx.z;
  const int S = p.S, W = p.window, G = p.Hq / p.Hkv;
  const int64_t q_ld = static_cast<int64_t>(p.Hq) * D, kv_ld = static_cast<int64_t>(p.Hkv) * D;
  const int64_t kv_off = (static_cast<int64_t>(b) * S * p.Hkv + kvh) * D;

  // Queries that see a key of the block: [n0, m_end); tiles [mt_begin, mt_end) per query head.
  const int m_end = W > 0 ? min(S, n0 + BN - 1 + W) : S;
  const int mt_begin = n0 / BM, n_mt = (m_end + BM - 1) / BM - mt_begin;
  const int steps = G * n_mt;

  load_tile<T, D, BN, kKvThreads>(ks, static_cast<const T*>(p.k) + kv_off, kv_ld, n0, S, tid);
  load_tile<T, D, BN, kKvThreads>(vs, static_cast<const T*>(p.v) + kv_off, kv_ld, n0, S, tid);

  // Step `it` covers query head kvh * G + it / n_mt and query tile mt_begin + it % n_mt.
  auto issue = [&](int it, int buf) {
    const int h = kvh * G + it / n_mt, m0 = (mt_begin + it % n_mt) * BM;
    const int64_t q_off = (static_cast<int64_t>(b) * S * p.Hq + h) * D;
    load_tile<T, D, BM, kKvThreads>(qs + buf * BM * P, static_cast<const T*>(p.q) + q_off, q_ld, m0,
                                    S, tid);
    load_tile<T, D, BM, kKvThreads>(dos + buf * BM * P, static_cast<const T*>(p.dout) + q_off, q_ld,
                                    m0, S, tid);
    // Padding rows get lse = D = 0: their q and dO rows are zero, so they add nothing to dK, dV.
    const int64_t stat = (static_cast<int64_t>(b) * p.Hq + h) * S;
    for (int r = tid; r < BM; r += kKvThreads) {
      const int i = m0 + r;
      cp_async_4(lse_s + buf * BM + r, i < S ? p.lse + stat + i : p.lse, i < S);
      cp_async_4(dd_s + buf * BM + r, i < S ? p.dd + stat + i : p.dd, i < S);
    }
  };
  issue(0, 0);
  cp_async_commit();

  const int g = lane >> 2, t = lane & 3;
  const int wn0 = n0 + warp * 16;  // the warp's first key
  const int keys[2] = {wn0 + g, wn0 + g + 8};
  const float scale_log2 = p.scale * kLog2e;

  float dk[HD::kNTiles][4], dv[HD::kNTiles][4];
#pragma unroll
  for (int i = 0; i < HD::kNTiles; ++i)
#pragma unroll
    for (int e = 0; e < 4; ++e)
      dk[i][e] = dv[i][e] = 0.f;

  for (int it = 0; it < steps; ++it) {
    const int buf = it & 1;
    if (it + 1 < steps) {
      issue(it + 1, buf ^ 1);
      cp_async_commit();
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();

    const int m0 = (mt_begin + it % n_mt) * BM;
    const T* qt = qs + buf * BM * P;
    const T* dot_t = dos + buf * BM * P;
    const float* lse_t = lse_s + buf * BM;
    const float* dd_t = dd_s + buf * BM;
    // A warp none of whose keys is seen by this query tile skips it.
    const bool skip = m0 + BM - 1 < wn0 || (W > 0 && m0 - (wn0 + 15) >= W);
    if (!skip) {
      // S^T = K Q^T and dP^T = V dO^T in one pass (rows: the warp's keys, columns: the tile's
      // queries); the two chains interleave, which hides the mma latency.
      float pt[BM / 8][4], dpt[BM / 8][4];
#pragma unroll
      for (int i = 0; i < BM / 8; ++i)
#pragma unroll
        for (int e = 0; e < 4; ++e)
          pt[i][e] = dpt[i][e] = 0.f;
#pragma unroll
      for (int kk = 0; kk < HD::kKSteps; ++kk) {
        uint32_t ak[4], av[4];
        load_a<T, P>(ak, ks, warp * 16, kk * 16, lane);
        load_a<T, P>(av, vs, warp * 16, kk * 16, lane);
#pragma unroll
        for (int np = 0; np < BM / 16; ++np) {
          uint32_t bq[4], bg[4];
          load_b_nk<T, P>(bq, qt, np * 16, kk * 16, lane);
          load_b_nk<T, P>(bg, dot_t, np * 16, kk * 16, lane);
          mma<T>(pt[2 * np], ak, bq);
          mma<T>(pt[2 * np + 1], ak, bq + 2);
          mma<T>(dpt[2 * np], av, bg);
          mma<T>(dpt[2 * np + 1], av, bg + 2);
        }
      }
      const bool need_mask =
          m0 < wn0 + 15 || (W > 0 && m0 + BM - 1 - wn0 >= W) || p.doc_starts != nullptr;
#pragma unroll
      for (int nt = 0; nt < BM / 8; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int c = nt * 8 + 2 * t + (e & 1);  // query m0 + c
          const float v = fast_exp2(pt[nt][e] * scale_log2 - lse_t[c] * kLog2e);
          const bool hidden = !visible(m0 + c, keys[e >> 1], W) ||
                              before_document(p.doc_starts, b, S, m0 + c, keys[e >> 1]);
          pt[nt][e] = need_mask && hidden ? 0.f : v;
        }

        // dV += P^T dO.
#pragma unroll
      for (int kk = 0; kk < BM / 16; ++kk) {
        uint32_t a[4];
        acc_to_a<T>(a, pt[2 * kk], pt[2 * kk + 1]);
#pragma unroll
        for (int dp = 0; dp < D / 16; ++dp) {
          uint32_t bb[4];
          load_b_kn<T, P>(bb, dot_t, kk * 16, dp * 16, lane);
          mma<T>(dv[2 * dp], a, bb);
          mma<T>(dv[2 * dp + 1], a, bb + 2);
        }
      }

      // dS^T = P^T (dP^T - D), then dK += dS^T Q (the scale is applied once at the end).
#pragma unroll
      for (int nt = 0; nt < BM / 8; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e)
          dpt[nt][e] = pt[nt][e] * (dpt[nt][e] - dd_t[nt * 8 + 2 * t + (e & 1)]);
#pragma unroll
      for (int kk = 0; kk < BM / 16; ++kk) {
        uint32_t a[4];
        acc_to_a<T>(a, dpt[2 * kk], dpt[2 * kk + 1]);
#pragma unroll
        for (int dp = 0; dp < D / 16; ++dp) {
          uint32_t bb[4];
          load_b_kn<T, P>(bb, qt, kk * 16, dp * 16, lane);
          mma<T>(dk[2 * dp], a, bb);
          mma<T>(dk[2 * dp + 1], a, bb + 2);
        }
      }
    }
    __syncthreads();  // the buffer just read is refilled by the next iteration's prefetch
  }

  T* dkg = static_cast<T*>(p.dk) + kv_off;
  T* dvg = static_cast<T*>(p.dv) + kv_off;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int j = keys[r];
    if (j >= S) continue;
#pragma unroll
    for (int dn = 0; dn < HD::kNTiles; ++dn) {
      const int64_t off = j * kv_ld + dn * 8 + 2 * t;
      *reinterpret_cast<uint32_t*>(dkg + off) =
          pack2<T>(dk[dn][2 * r] * p.scale, dk[dn][2 * r + 1] * p.scale);
      *reinterpret_cast<uint32_t*>(dvg + off) = pack2<T>(dv[dn][2 * r], dv[dn][2 * r + 1]);
    }
  }
}

template <typename T, int D>
void launch_dkdv(const BwdArgs& a, Stream stream) {
  constexpr size_t smem = dkdv_smem_bytes<T, D>();
  auto kernel = attention_bwd_dkdv_kernel<T, D>;
  ZT_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     static_cast<int>(smem)));
  const dim3 grid((a.S + kKvBlockN - 1) / kKvBlockN, a.Hkv, a.B);
  kernel<<<grid, kKvThreads, smem, to_cuda(stream)>>>(a);
  ZT_CUDA_CHECK_LAUNCH();
}

}  // namespace

void backward_dkdv_tensor_core(const BwdArgs& a, DType dtype, Stream stream) {
  with_half_type("attention_backward", dtype, [&](auto tv) {
    using T = decltype(tv);
    with_head_dim("attention_backward", a.D,
                  [&](auto dv) { launch_dkdv<T, decltype(dv)::value>(a, stream); });
  });
}

}  // namespace zt::kernels::cuda::attn
