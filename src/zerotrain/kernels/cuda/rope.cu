// CUDA rotary position embedding. One block per token (b, s): thread (tx, ty) takes the frequency
// packs tx, tx + blockDim.x, ... of the first half of D, computes their cos/sin once (full-range
// sincosf in f32, rounded to the activation dtype as Hugging Face does) and applies them to heads
// ty, ty + blockDim.y, .... Products and sums use __fmul_rn/__fadd_rn and round to the dtype after
// each op, as PyTorch's elementwise ops (and the CPU kernel) do; no FMA contraction.
// Tested by tests/kernels/test_rope_cuda.cpp.
#include <algorithm>

#include "zerotrain/core/cuda/cuda_check.h"
#include "zerotrain/kernels/cuda/float_packs.cuh"
#include "zerotrain/kernels/cuda/rope.h"

namespace zt::kernels::cuda {

namespace {

using dev::round_to;

constexpr int kRopeThreads = 128;

__device__ __forceinline__ float to_float_pos(int p) {
  return static_cast<float>(p);
}
__device__ __forceinline__ float to_float_pos(long long p) {
  return __ll2float_rn(p);
}

// src, dst: [tokens = B * S, H, D] T (dst may alias src); pos: [P] I with P = S (shared by the
// rows) or B * S (per row), token t at pos[t % P]; inv: [D / 2] f32.
// VEC elements of each half move as one pack.
template <typename T, typename I, int VEC>
__global__ void __launch_bounds__(kRopeThreads)
    rope_kernel(const T* src, T* dst, const I* __restrict__ pos, const float* __restrict__ inv,
                long long tokens, long long P, int H, int D, bool backward) {
  const int half = D / 2, packs = half / VEC;
  for (long long t = blockIdx.x; t < tokens; t += gridDim.x) {
    const float p = to_float_pos(pos[t % P]);
    for (int j = threadIdx.x; j < packs; j += blockDim.x) {
      float c[VEC], s[VEC];
#pragma unroll
      for (int v = 0; v < VEC; ++v) {
        float sn, cs;
        sincosf(__fmul_rn(p, inv[j * VEC + v]), &sn, &cs);
        c[v] = round_to<T>(cs);
        s[v] = round_to<T>(backward ? -sn : sn);
      }
      for (int h = threadIdx.y; h < H; h += blockDim.y) {
        const long long base = (t * H + h) * D + static_cast<long long>(j) * VEC;
        float x1[VEC], x2[VEC], y1[VEC], y2[VEC];
        dev::load_pack<T, VEC>(src + base, x1);
        dev::load_pack<T, VEC>(src + base + half, x2);
#pragma unroll
        for (int v = 0; v < VEC; ++v) {
          y1[v] =
              __fsub_rn(round_to<T>(__fmul_rn(x1[v], c[v])), round_to<T>(__fmul_rn(x2[v], s[v])));
          y2[v] =
              __fadd_rn(round_to<T>(__fmul_rn(x2[v], c[v])), round_to<T>(__fmul_rn(x1[v], s[v])));
        }
        dev::store_pack<T, VEC>(dst + base, y1);
        dev::store_pack<T, VEC>(dst + base + half, y2);
      }
    }
  }
}

template <typename T, typename I, int VEC>
void launch(const Tensor& src, const Tensor& positions, const Tensor& inv_freq, Tensor& dst,
            bool backward, Stream stream) {
  const long long B = src.size(0), S = src.size(1), H = src.size(2), D = src.size(3);
  const int packs = static_cast<int>(D / 2 / VEC);
  const int tx = std::min(packs, kRopeThreads);
  const int ty = static_cast<int>(std::max(1LL, std::min<long long>(H, kRopeThreads / tx)));
  const unsigned grid = static_cast<unsigned>(std::min<long long>(B * S, 1LL << 30));
  rope_kernel<T, I, VEC><<<grid, dim3(tx, ty), 0, to_cuda(stream)>>>(
      static_cast<const T*>(src.data()), static_cast<T*>(dst.data()),
      static_cast<const I*>(positions.data()), inv_freq.data_as<float>(), B * S,
      static_cast<long long>(positions.numel()), static_cast<int>(H), static_cast<int>(D),
      backward);
  ZT_CUDA_CHECK_LAUNCH();
}

}  // namespace

void rope_rotate(const Tensor& src, const Tensor& positions, const Tensor& inv_freq, Tensor& dst,
                 bool backward, Stream stream) {
  if (src.numel() == 0) return;
  CudaDeviceGuard guard(src.device());
  const char* op = backward ? "rope_backward" : "rope_forward";
  const long long half = src.size(3) / 2;
  ZT_DISPATCH_FLOAT(src.dtype(), op, T, {
    constexpr int kVec = dev::kPackBytes / sizeof(T);
    const bool packed = half % kVec == 0 && is_aligned(src.data(), dev::kPackBytes) &&
                        is_aligned(dst.data(), dev::kPackBytes);
    auto go = [&](auto index_tag) {
      using I = decltype(index_tag);
      if (packed)
        launch<T, I, kVec>(src, positions, inv_freq, dst, backward, stream);
      else
        launch<T, I, 1>(src, positions, inv_freq, dst, backward, stream);
    };
    if (positions.dtype() == DType::i32)
      go(int{});
    else
      go(static_cast<long long>(0));
  });
}

}  // namespace zt::kernels::cuda
