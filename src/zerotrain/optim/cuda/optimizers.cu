// CUDA optimizers as fused multi-tensor launches (see cuda/launch.h). One launch takes up to 32
// runs of the same grad and copy dtypes, their pointers and constants passed by value; the grid
// has one block per 8192-element chunk of every run, and a block finds its run by scanning the
// runs' first-chunk indices. Threads update 8 consecutive elements per iteration with 16-byte
// loads and stores where the run's buffers are 16-byte aligned, element by element otherwise.
// The math uses explicitly rounded intrinsics (__fmul_rn, __fadd_rn, __fdiv_rn, __fsqrt_rn), so
// nothing fuses into FMA and every element equals the CPU scalar path's bit for bit.
// Adam with amsgrad carries a third state (max_exp_avg_sq). Tested by
// tests/optim/test_optimizers_cuda.cpp.
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "zerotrain/core/cuda/cuda_check.h"
#include "zerotrain/core/cuda/dispatch.cuh"
#include "zerotrain/optim/cuda/launch.h"
#include "zerotrain/optim/cuda/packs.cuh"

namespace zt::optim::cuda {

namespace {

using namespace packs;  // NOLINT: the rounded f32 operations read as arithmetic
using zt::dev::from_f;
using zt::dev::to_f;

constexpr int kMaxRuns = 32;
constexpr int kThreads = 256;
constexpr int64_t kChunk = 8192;  // elements per block, a multiple of kThreads * kPack

struct RunPtrs {
  float* p;
  float* s0;
  float* s1;
  const void* grad;
  void* copy;
  int64_t n;
  int aligned;  // every buffer 16-byte aligned: take the packed path
  float* s2;    // Adam's max_exp_avg_sq with amsgrad, else null
};

template <class Consts>
struct RunList {
  RunPtrs run[kMaxRuns];
  Consts c[kMaxRuns];
  int64_t first_chunk[kMaxRuns + 1];
  int count;
};

struct AdamOp {
  using Consts = cpu::AdamConsts;
  static constexpr int kStates = 2;
  __device__ static void apply(const Consts& c, float& p, float g, float& m, float& v) {
    g = mul(g, c.grad_scale);
    g = add(g, mul(c.l2_wd, p));
    p = mul(p, c.decay);
    m = add(mul(c.beta1, m), mul(c.one_minus_beta1, g));
    v = add(mul(c.beta2, v), mul(c.one_minus_beta2, mul(g, g)));
    const float denom = add(div(__fsqrt_rn(v), c.bc2_sqrt), c.eps);
    p = sub(p, mul(c.step_size, div(m, denom)));
  }
};

// Adam with amsgrad: the running max of v (third state) in the denominator.
struct AdamAmsgradOp {
  using Consts = cpu::AdamConsts;
  static constexpr int kStates = 3;
  __device__ static void apply(const Consts& c, float& p, float g, float& m, float& v,
                               float& vmax) {
    g = mul(g, c.grad_scale);
    g = add(g, mul(c.l2_wd, p));
    p = mul(p, c.decay);
    m = add(mul(c.beta1, m), mul(c.one_minus_beta1, g));
    v = add(mul(c.beta2, v), mul(c.one_minus_beta2, mul(g, g)));
    vmax = vmax > v ? vmax : v;  // the CPU's max: v when either is NaN
    const float denom = add(div(__fsqrt_rn(vmax), c.bc2_sqrt), c.eps);
    p = sub(p, mul(c.step_size, div(m, denom)));
  }
};

// Calls Op::apply with the third state where the op has one.
template <class Op>
__device__ __forceinline__ void apply_op(const typename Op::Consts& c, float& p, float g, float& a,
                                         float& b, float& c3) {
  if constexpr (Op::kStates >= 3)
    Op::apply(c, p, g, a, b, c3);
  else
    Op::apply(c, p, g, a, b);
}

struct LionOp {
  using Consts = cpu::LionConsts;
  static constexpr int kStates = 1;
  __device__ static void apply(const Consts& c, float& p, float g, float& m, float&) {
    g = mul(g, c.grad_scale);
    p = mul(p, c.decay);
    const float u = add(mul(c.beta1, m), mul(c.one_minus_beta1, g));
    const float s = u > 0.f ? 1.f : (u < 0.f ? -1.f : 0.f);
    p = sub(p, mul(c.lr, s));
    m = add(mul(c.beta2, m), mul(c.one_minus_beta2, g));
  }
};

template <int kMomentum>
struct SgdOp {
  using Consts = cpu::SgdConsts;
  static constexpr int kStates = kMomentum;
  __device__ static void apply(const Consts& c, float& p, float g, float& buf, float&) {
    float d = mul(g, c.grad_scale);
    d = add(d, mul(c.wd, p));
    if (kMomentum == 1) {
      buf = c.first_step ? d : add(mul(c.momentum, buf), mul(c.one_minus_dampening, d));
      d = c.nesterov ? add(d, mul(c.momentum, buf)) : buf;
    }
    p = sub(p, mul(c.lr, d));
  }
};

struct NoCopy {};

// One block: one chunk of one run. G: grad element type; C: copy element type or NoCopy.
template <class Op, typename G, typename C>
__global__ void __launch_bounds__(kThreads) multi_run_kernel(RunList<typename Op::Consts> list) {
  int r = 0;
  while (r + 1 < list.count && list.first_chunk[r + 1] <= static_cast<int64_t>(blockIdx.x))
    ++r;
  const RunPtrs run = list.run[r];
  const typename Op::Consts c = list.c[r];
  const int64_t lo = (static_cast<int64_t>(blockIdx.x) - list.first_chunk[r]) * kChunk;
  const int64_t hi = min(run.n, lo + kChunk);
  const G* grad = static_cast<const G*>(run.grad);
  C* copy = static_cast<C*>(run.copy);
  int64_t scalar_from = lo;
  if (run.aligned) {
    const int64_t packs_end = lo + (hi - lo) / kPack * kPack;
    for (int64_t i = lo + threadIdx.x * kPack; i < packs_end; i += kThreads * kPack) {
      float p[kPack], g[kPack], a[kPack] = {}, b[kPack] = {}, c3[kPack] = {};
      load8(run.p + i, p);
      load8(grad + i, g);
      if (Op::kStates >= 1) load8(run.s0 + i, a);
      if (Op::kStates >= 2) load8(run.s1 + i, b);
      if (Op::kStates >= 3) load8(run.s2 + i, c3);
#pragma unroll
      for (int e = 0; e < kPack; ++e)
        apply_op<Op>(c, p[e], g[e], a[e], b[e], c3[e]);
      store8(run.p + i, p);
      if (Op::kStates >= 1) store8(run.s0 + i, a);
      if (Op::kStates >= 2) store8(run.s1 + i, b);
      if (Op::kStates >= 3) store8(run.s2 + i, c3);
      if constexpr (!std::is_same_v<C, NoCopy>) store8(copy + i, p);
    }
    scalar_from = packs_end;
  }
  for (int64_t i = scalar_from + threadIdx.x; i < hi; i += kThreads) {
    float p = run.p[i], a = 0.f, b = 0.f, c3 = 0.f;
    if (Op::kStates >= 1) a = run.s0[i];
    if (Op::kStates >= 2) b = run.s1[i];
    if (Op::kStates >= 3) c3 = run.s2[i];
    apply_op<Op>(c, p, to_f(grad[i]), a, b, c3);
    run.p[i] = p;
    if (Op::kStates >= 1) run.s0[i] = a;
    if (Op::kStates >= 2) run.s1[i] = b;
    if (Op::kStates >= 3) run.s2[i] = c3;
    if constexpr (!std::is_same_v<C, NoCopy>) copy[i] = from_f<C>(p);
  }
}

bool aligned16(const void* p) {
  return (reinterpret_cast<uintptr_t>(p) & 15u) == 0;
}

template <class Op, typename G, typename C>
void launch_list(const RunList<typename Op::Consts>& list, Stream stream) {
  const int64_t chunks = list.first_chunk[list.count];
  if (chunks == 0) return;
  multi_run_kernel<Op, G, C>
      <<<static_cast<unsigned int>(chunks), kThreads, 0, to_cuda(stream)>>>(list);
  ZT_CUDA_CHECK_LAUNCH();
}

template <class Op, typename G>
void launch_for_copy(DType copy_dtype, bool has_copy, const RunList<typename Op::Consts>& list,
                     Stream stream) {
  if (!has_copy)
    launch_list<Op, G, NoCopy>(list, stream);
  else if (copy_dtype == DType::bf16)
    launch_list<Op, G, __nv_bfloat16>(list, stream);
  else
    launch_list<Op, G, __half>(list, stream);
}

// Groups the runs by (grad dtype, copy dtype) and launches each group in lists of kMaxRuns.
template <class Op>
void launch_all(std::span<const cpu::Run> runs, std::span<const typename Op::Consts> consts,
                Device device, Stream stream) {
  CudaDeviceGuard guard(device);
  std::vector<bool> done(runs.size(), false);
  for (size_t lead = 0; lead < runs.size(); ++lead) {
    if (done[lead]) continue;
    const DType gd = runs[lead].grad_dtype, cd = runs[lead].copy_dtype;
    const bool has_copy = runs[lead].copy != nullptr;
    RunList<typename Op::Consts> list{};
    auto flush = [&] {
      if (list.count == 0) return;
      if (gd == DType::f32)
        launch_for_copy<Op, float>(cd, has_copy, list, stream);
      else if (gd == DType::bf16)
        launch_for_copy<Op, __nv_bfloat16>(cd, has_copy, list, stream);
      else
        launch_for_copy<Op, __half>(cd, has_copy, list, stream);
      list = RunList<typename Op::Consts>{};
    };
    for (size_t i = lead; i < runs.size(); ++i) {
      const cpu::Run& r = runs[i];
      if (done[i] || r.grad_dtype != gd || (r.copy != nullptr) != has_copy ||
          (has_copy && r.copy_dtype != cd))
        continue;
      done[i] = true;
      if (r.n == 0) continue;
      RunPtrs& p = list.run[list.count];
      p = RunPtrs{r.p,
                  r.s0,
                  r.s1,
                  r.grad,
                  r.copy,
                  r.n,
                  aligned16(r.p) && aligned16(r.grad) && (!r.s0 || aligned16(r.s0)) &&
                      (!r.s1 || aligned16(r.s1)) && (!r.s2 || aligned16(r.s2)) &&
                      (!r.copy || aligned16(r.copy)),
                  r.s2};
      list.c[list.count] = consts[i];
      list.first_chunk[list.count + 1] = list.first_chunk[list.count] + (r.n + kChunk - 1) / kChunk;
      ++list.count;
      if (list.count == kMaxRuns) flush();
    }
    flush();
  }
}

}  // namespace

void adam(std::span<const cpu::Run> runs, std::span<const cpu::AdamConsts> consts, Device device,
          Stream stream) {
  // The front-end gives every non-empty run a third state with amsgrad, none without.
  if (std::any_of(runs.begin(), runs.end(), [](const cpu::Run& r) { return r.s2 != nullptr; }))
    launch_all<AdamAmsgradOp>(runs, consts, device, stream);
  else
    launch_all<AdamOp>(runs, consts, device, stream);
}

void lion(std::span<const cpu::Run> runs, std::span<const cpu::LionConsts> consts, Device device,
          Stream stream) {
  launch_all<LionOp>(runs, consts, device, stream);
}

void sgd(std::span<const cpu::Run> runs, std::span<const cpu::SgdConsts> consts, Device device,
         Stream stream) {
  // Any run, not the first: an empty run may leave its momentum buffer null.
  if (std::any_of(runs.begin(), runs.end(), [](const cpu::Run& r) { return r.s0 != nullptr; }))
    launch_all<SgdOp<1>>(runs, consts, device, stream);
  else
    launch_all<SgdOp<0>>(runs, consts, device, stream);
}

}  // namespace zt::optim::cuda
