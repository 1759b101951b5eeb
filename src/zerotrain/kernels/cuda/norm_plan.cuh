// Launch plans shared by the CUDA norm kernels (norm_forward.cu, norm_backward.cu).
//
// [Note: norm row plans]
// A row of C elements is held in registers when it splits into 16-byte packs (C a multiple of
// 16 / sizeof(T), 16-byte aligned pointers) over at most kMaxRowThreads threads with at most 16
// elements per thread: one block per row, each thread owning packs tid, tid + blockDim.x, ... of
// every row it visits. That covers C <= 8192 for f32, f16 and bf16. Any other shape takes the
// generic kernels, which stream the row from memory twice (the second pass hits L1/L2).
#pragma once

#include <type_traits>

#include "zerotrain/core/tensor.h"
#include "zerotrain/kernels/cuda/float_packs.cuh"

namespace zt::kernels::cuda {

constexpr int kMaxRowThreads = 512;
constexpr int kMaxRowElems = 16;  // elements of a row per thread on the register path
constexpr int kAnyThreads = 256;  // block size of the generic kernels

struct RowPlan {
  int packs_per_thread = 0;  // 0: no register plan, use the generic kernels
  int threads = 0;
};

// `aligned`: every row tensor's pointer is 16-byte aligned and every parameter's pointer is
// aligned to one pack's worth of its elements. `wide` (the forward): as many elements per thread as
// allowed while the block keeps at least one full warp, which measured fastest (H200, bf16,
// 4096 x 4096: 16 elements x 256 threads moved 2.65 TB/s, 8 x 512 threads 2.48). Otherwise (the
// backward, which holds five values per element) the fewest elements per thread.
template <typename T>
RowPlan plan_rows(long long cols, bool aligned, bool wide) {
  constexpr int V = dev::kPackBytes / sizeof(T);
  RowPlan p;
  if (!aligned || cols % V != 0) return p;
  const long long packs = cols / V;
  for (int ppt = wide ? kMaxRowElems / V : 1; ppt >= 1 && ppt * V <= kMaxRowElems;
       ppt = wide ? ppt / 2 : ppt * 2) {
    const long long needed = (packs + ppt - 1) / ppt;
    if (wide && ppt > 1 && needed < 32) continue;  // would leave most of the only warp idle
    const long long threads = round_up(needed, 32);
    if (threads <= kMaxRowThreads) {
      p.packs_per_thread = ppt;
      p.threads = static_cast<int>(threads);
      return p;
    }
    if (wide) return p;  // fewer elements per thread only needs more threads
  }
  return p;
}

// Calls fn(std::integral_constant<int, PPT>{}) for the plan's packs per thread, instantiating only
// the counts that fit kMaxRowElems for T.
template <typename T, typename Fn>
void with_packs_per_thread(int ppt, Fn&& fn) {
  constexpr int V = dev::kPackBytes / sizeof(T);
  switch (ppt) {
    case 1:
      fn(std::integral_constant<int, 1>{});
      break;
    case 2:
      if constexpr (2 * V <= kMaxRowElems) fn(std::integral_constant<int, 2>{});
      break;
    case 4:
      if constexpr (4 * V <= kMaxRowElems) fn(std::integral_constant<int, 4>{});
      break;
    default:
      break;
  }
}

// Calls fn(T{}, W{}) with the device element types of x's and w's dtypes.
template <typename Fn>
void dispatch_x_w(DType xt, DType wt, const char* op, Fn&& fn) {
  ZT_DISPATCH_FLOAT(xt, op, scalar_t,
                    { ZT_DISPATCH_FLOAT(wt, op, weight_t, { fn(scalar_t{}, weight_t{}); }); });
}

}  // namespace zt::kernels::cuda
