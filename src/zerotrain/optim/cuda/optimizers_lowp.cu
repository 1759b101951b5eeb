// CUDA Adam on bf16 values and moments in place (optim/low_precision.h): one fused launch per 32
// runs of one grad dtype, one block per 8192-element chunk of a run (a block finds its run by
// scanning the runs' first-chunk indices). Each thread widens p, m, v and g to f32, runs the
// update with explicitly rounded intrinsics (no FMA contraction, as the CPU path) and rounds p, m
// and v to bf16 once at the store, so every element equals the CPU scalar path's bits.
// Tested by tests/optim/test_optimizers_cuda.cpp (GPU vs CPU, skipped without a GPU).
#include <cstdint>
#include <vector>

#include "zerotrain/core/cuda/cuda_check.h"
#include "zerotrain/core/cuda/dispatch.cuh"
#include "zerotrain/optim/cuda/launch.h"

namespace zt::optim::cuda {

namespace {

using zt::dev::to_f;

constexpr int kMaxRuns = 32;
constexpr int kThreads = 256;
constexpr int64_t kChunk = 8192;  // elements per block

struct LowpPtrs {
  __nv_bfloat16* p;
  __nv_bfloat16* m;
  __nv_bfloat16* v;
  const void* grad;
  int64_t n;
};

struct LowpList {
  LowpPtrs run[kMaxRuns];
  cpu::AdamConsts c[kMaxRuns];
  int64_t first_chunk[kMaxRuns + 1];
  int count;
};

template <typename G>
__global__ void __launch_bounds__(kThreads) adam_lowp_kernel(LowpList list) {
  int r = 0;
  while (r + 1 < list.count && list.first_chunk[r + 1] <= static_cast<int64_t>(blockIdx.x))
    ++r;
  const LowpPtrs run = list.run[r];
  const cpu::AdamConsts c = list.c[r];
  const int64_t lo = (static_cast<int64_t>(blockIdx.x) - list.first_chunk[r]) * kChunk;
  const int64_t hi = min(run.n, lo + kChunk);
  const G* grad = static_cast<const G*>(run.grad);
  for (int64_t i = lo + threadIdx.x; i < hi; i += kThreads) {
    float p = __bfloat162float(run.p[i]);
    float m = __bfloat162float(run.m[i]);
    float v = __bfloat162float(run.v[i]);
    float g = __fmul_rn(to_f(grad[i]), c.grad_scale);
    g = __fadd_rn(g, __fmul_rn(c.l2_wd, p));
    p = __fmul_rn(p, c.decay);
    m = __fadd_rn(__fmul_rn(c.beta1, m), __fmul_rn(c.one_minus_beta1, g));
    v = __fadd_rn(__fmul_rn(c.beta2, v), __fmul_rn(c.one_minus_beta2, __fmul_rn(g, g)));
    const float denom = __fadd_rn(__fdiv_rn(__fsqrt_rn(v), c.bc2_sqrt), c.eps);
    p = __fsub_rn(p, __fmul_rn(c.step_size, __fdiv_rn(m, denom)));
    run.p[i] = __float2bfloat16_rn(p);
    run.m[i] = __float2bfloat16_rn(m);
    run.v[i] = __float2bfloat16_rn(v);
  }
}

void launch(DType grad_dtype, const LowpList& list, Stream stream) {
  const int64_t chunks = list.first_chunk[list.count];
  if (chunks == 0) return;
  const auto grid = static_cast<unsigned int>(chunks);
  if (grad_dtype == DType::f32)
    adam_lowp_kernel<float><<<grid, kThreads, 0, to_cuda(stream)>>>(list);
  else if (grad_dtype == DType::bf16)
    adam_lowp_kernel<__nv_bfloat16><<<grid, kThreads, 0, to_cuda(stream)>>>(list);
  else
    adam_lowp_kernel<__half><<<grid, kThreads, 0, to_cuda(stream)>>>(list);
  ZT_CUDA_CHECK_LAUNCH();
}

}  // namespace

void adam_lowp(std::span<const cpu::RunLowp> runs, std::span<const cpu::AdamConsts> consts,
               Device device, Stream stream) {
  CudaDeviceGuard guard(device);
  for (const DType gd : {DType::f32, DType::bf16, DType::f16}) {
    LowpList list{};
    for (size_t i = 0; i < runs.size(); ++i) {
      const cpu::RunLowp& r = runs[i];
      if (r.grad_dtype != gd || r.n == 0) continue;
      list.run[list.count] =
          LowpPtrs{reinterpret_cast<__nv_bfloat16*>(r.p), reinterpret_cast<__nv_bfloat16*>(r.s0),
                   reinterpret_cast<__nv_bfloat16*>(r.s1), r.grad, r.n};
      list.c[list.count] = consts[i];
      list.first_chunk[list.count + 1] = list.first_chunk[list.count] + (r.n + kChunk - 1) / kChunk;
      if (++list.count == kMaxRuns) {
        launch(gd, list, stream);
        list = LowpList{};
      }
    }
    if (list.count > 0) launch(gd, list, stream);
  }
}

}  // namespace zt::optim::cuda
