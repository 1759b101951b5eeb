// CUDA LAMB as three fused multi-tensor launches per list of up to 32 runs. See lamb.h.
// Tested by tests/optim/test_optimizers_cuda.cpp (OptimCuda.Lamb*).
//
// [Note: CUDA LAMB]
// Pass 1 (lamb_moments_kernel): one block per 8192-element chunk of every run updates m and v,
// computes u = (m/bc1)/denom + wd p and leaves the chunk's sum p^2 and sum u^2 (squares in f32 as
// on the CPU, summed in f64: per thread, then a fixed tree over the block) in a scratch slot.
// lamb_norms_kernel then sums a run's chunk slots in chunk order (one block per run, fixed tree)
// into the run's two norms. Pass 2 (lamb_apply_kernel): every block turns its run's norms into
// the trust ratio exactly as lamb_apply does on the host (f32 sqrt of the rounded sums, w/u
// clamped, 1 when either is 0, times lr), recomputes u from p, m, v and applies p -= lr_coeff u,
// writing the param copy. Every reduction has a fixed order, so results repeat bitwise.
// m, v and u use explicitly rounded f32 operations in the CPU's order, so they equal the CPU
// scalar path's bit for bit; only the norms differ from the CPU (its summation order is per SIMD
// lane and in f32 within a 16384-element block), which moves the trust ratio by a few 1e-6
// relative at most and each step's displacement of p by as much.
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "zerotrain/core/cuda/cuda_check.h"
#include "zerotrain/core/tensor.h"
#include "zerotrain/optim/cuda/lamb.h"
#include "zerotrain/optim/cuda/packs.cuh"

namespace zt::optim::cuda {

namespace {

using namespace packs;  // NOLINT: the rounded f32 operations read as arithmetic
using zt::dev::from_f;
using zt::dev::to_f;

constexpr int kMaxRuns = 32;
constexpr int kThreads = 256;
constexpr int64_t kChunk = 8192;  // elements per block, a multiple of kThreads * kPack

struct LambRun {
  float* p;       // [n] f32 master
  float* m;       // [n] f32 exp_avg
  float* v;       // [n] f32 exp_avg_sq
  const void* g;  // [n] grad dtype of the list
  void* copy;     // [n] copy dtype of the list, or null
  int64_t n;
  int index;    // position in the caller's runs: where its norms live
  int aligned;  // every buffer 16-byte aligned: take the packed path
};

struct LambList {
  LambRun run[kMaxRuns];
  cpu::LambConsts c[kMaxRuns];
  int64_t first_chunk[kMaxRuns + 1];  // run r's chunks: [first_chunk[r], first_chunk[r + 1])
  int64_t slot_base;                  // this list's first chunk slot in the scratch buffer
  int count;
  DType grad_dtype, copy_dtype;
  bool has_copy;
};
static_assert(sizeof(LambList) + 64 <= 4096, "a LambList must fit the kernel parameter space");

__device__ __forceinline__ int run_of_block(const LambList& list) {
  int r = 0;
  while (r + 1 < list.count && list.first_chunk[r + 1] <= static_cast<int64_t>(blockIdx.x))
    ++r;
  return r;
}

__device__ __forceinline__ float lamb_u(const cpu::LambConsts& c, float p, float m, float v) {
  const float v_hat = div(v, c.bc2);
  const float denom =
      c.eps_inside_sqrt ? __fsqrt_rn(add(v_hat, c.eps)) : add(__fsqrt_rn(v_hat), c.eps);
  return add(div(div(m, c.bc1), denom), mul(c.wd, p));
}

// One element of pass 1: new m and v, and the element's p^2 and u^2 added to the sums.
__device__ __forceinline__ void moments_one(const cpu::LambConsts& c, float p, float g, float& m,
                                            float& v, double& psq, double& usq) {
  g = mul(g, c.grad_scale);
  m = add(mul(c.beta1, m), mul(c.one_minus_beta1, g));
  v = add(mul(c.beta2, v), mul(c.one_minus_beta2, mul(g, g)));
  const float u = lamb_u(c, p, m, v);
  psq += static_cast<double>(mul(p, p));
  usq += static_cast<double>(mul(u, u));
}

template <typename G>
__global__ void __launch_bounds__(kThreads) lamb_moments_kernel(LambList list, double* slots) {
  const int r = run_of_block(list);
  const LambRun run = list.run[r];
  const cpu::LambConsts c = list.c[r];
  const int64_t lo = (static_cast<int64_t>(blockIdx.x) - list.first_chunk[r]) * kChunk;
  const int64_t hi = min(run.n, lo + kChunk);
  const G* grad = static_cast<const G*>(run.g);
  double psq = 0, usq = 0;
  int64_t scalar_from = lo;
  if (run.aligned) {
    const int64_t packs_end = lo + (hi - lo) / kPack * kPack;
    for (int64_t i = lo + threadIdx.x * kPack; i < packs_end; i += kThreads * kPack) {
      float p[kPack], g[kPack], m[kPack], v[kPack];
      load8(run.p + i, p);
      load8(grad + i, g);
      load8(run.m + i, m);
      load8(run.v + i, v);
#pragma unroll
      for (int e = 0; e < kPack; ++e)
        moments_one(c, p[e], g[e], m[e], v[e], psq, usq);
      store8(run.m + i, m);
      store8(run.v + i, v);
    }
    scalar_from = packs_end;
  }
  for (int64_t i = scalar_from + threadIdx.x; i < hi; i += kThreads) {
    float m = run.m[i], v = run.v[i];
    moments_one(c, run.p[i], to_f(grad[i]), m, v, psq, usq);
    run.m[i] = m;
    run.v[i] = v;
  }
  block_sum2<kThreads>(psq, usq);
  if (threadIdx.x == 0) {
    double* slot = slots + 2 * (list.slot_base + static_cast<int64_t>(blockIdx.x));
    slot[0] = psq;
    slot[1] = usq;
  }
}

// One block per run of the list: its chunk slots summed in a fixed order into norms[2 index].
__global__ void __launch_bounds__(kThreads)
    lamb_norms_kernel(LambList list, const double* slots, double* norms) {
  const int r = static_cast<int>(blockIdx.x);
  const int64_t first = list.slot_base + list.first_chunk[r];
  const int64_t last = list.slot_base + list.first_chunk[r + 1];
  double psq = 0, usq = 0;
  for (int64_t k = first + threadIdx.x; k < last; k += kThreads) {
    psq += slots[2 * k];
    usq += slots[2 * k + 1];
  }
  block_sum2<kThreads>(psq, usq);
  if (threadIdx.x == 0) {
    norms[2 * list.run[r].index] = psq;
    norms[2 * list.run[r].index + 1] = usq;
  }
}

// lr times DeepSpeed's trust ratio, in optim::lamb_apply's f32 operations and clamp order.
__device__ __forceinline__ float lr_coeff(const double* norms, int index, const LambTrust& t) {
  const float w = __fsqrt_rn(__double2float_rn(norms[2 * index]));
  const float u = __fsqrt_rn(__double2float_rn(norms[2 * index + 1]));
  float coeff = 1.0f;
  if (w != 0.f && u != 0.f) {
    coeff = div(w, u);
    coeff = coeff < t.min_coeff ? t.min_coeff : coeff;  // std::max(coeff, min_coeff)
    coeff = t.max_coeff < coeff ? t.max_coeff : coeff;  // std::min(coeff, max_coeff)
  }
  return mul(t.lr, coeff);
}

struct NoCopy {};

template <typename C>
__global__ void __launch_bounds__(kThreads)
    lamb_apply_kernel(LambList list, const double* norms, LambTrust trust) {
  const int r = run_of_block(list);
  const LambRun run = list.run[r];
  const cpu::LambConsts c = list.c[r];
  const float step = lr_coeff(norms, run.index, trust);
  const int64_t lo = (static_cast<int64_t>(blockIdx.x) - list.first_chunk[r]) * kChunk;
  const int64_t hi = min(run.n, lo + kChunk);
  C* copy = static_cast<C*>(run.copy);
  int64_t scalar_from = lo;
  if (run.aligned) {
    const int64_t packs_end = lo + (hi - lo) / kPack * kPack;
    for (int64_t i = lo + threadIdx.x * kPack; i < packs_end; i += kThreads * kPack) {
      float p[kPack], m[kPack], v[kPack];
      load8(run.p + i, p);
      load8(run.m + i, m);
      load8(run.v + i, v);
#pragma unroll
      for (int e = 0; e < kPack; ++e)
        p[e] = sub(p[e], mul(step, lamb_u(c, p[e], m[e], v[e])));
      store8(run.p + i, p);
      if constexpr (!std::is_same_v<C, NoCopy>) store8(copy + i, p);
    }
    scalar_from = packs_end;
  }
  for (int64_t i = scalar_from + threadIdx.x; i < hi; i += kThreads) {
    const float p = sub(run.p[i], mul(step, lamb_u(c, run.p[i], run.m[i], run.v[i])));
    run.p[i] = p;
    if constexpr (!std::is_same_v<C, NoCopy>) copy[i] = from_f<C>(p);
  }
}

bool aligned16(const void* p) {
  return (reinterpret_cast<uintptr_t>(p) & 15u) == 0;
}

// The runs grouped by (grad dtype, copy dtype) into lists of at most kMaxRuns non-empty runs, in
// the caller's order within a group; slot_base numbers the chunks of all lists consecutively.
std::vector<LambList> make_lists(std::span<const cpu::Run> runs,
                                 std::span<const cpu::LambConsts> consts) {
  std::vector<LambList> lists;
  std::vector<bool> done(runs.size(), false);
  for (size_t lead = 0; lead < runs.size(); ++lead) {
    if (done[lead]) continue;
    const cpu::Run& key = runs[lead];
    const bool has_copy = key.copy != nullptr;
    bool open = false;  // lists.back() takes runs of this group
    for (size_t i = lead; i < runs.size(); ++i) {
      const cpu::Run& r = runs[i];
      if (done[i] || r.grad_dtype != key.grad_dtype || (r.copy != nullptr) != has_copy ||
          (has_copy && r.copy_dtype != key.copy_dtype))
        continue;
      done[i] = true;
      if (r.n == 0) continue;
      if (!open || lists.back().count == kMaxRuns) {
        lists.emplace_back();
        lists.back().grad_dtype = key.grad_dtype;
        lists.back().copy_dtype = key.copy_dtype;
        lists.back().has_copy = has_copy;
        open = true;
      }
      LambList& l = lists.back();
      const bool aligned = aligned16(r.p) && aligned16(r.s0) && aligned16(r.s1) &&
                           aligned16(r.grad) && (!r.copy || aligned16(r.copy));
      l.run[l.count] = LambRun{r.p, r.s0, r.s1, r.grad, r.copy, r.n, static_cast<int>(i), aligned};
      l.c[l.count] = consts[i];
      l.first_chunk[l.count + 1] = l.first_chunk[l.count] + (r.n + kChunk - 1) / kChunk;
      ++l.count;
    }
  }
  int64_t base = 0;
  for (LambList& l : lists) {
    l.slot_base = base;
    base += l.first_chunk[l.count];
  }
  return lists;
}

int64_t total_slots(const std::vector<LambList>& lists) {
  if (lists.empty()) return 0;
  return lists.back().slot_base + lists.back().first_chunk[lists.back().count];
}

unsigned int chunks_of(const LambList& l) {
  return static_cast<unsigned int>(l.first_chunk[l.count]);
}

template <typename C>
void launch_apply(const LambList& l, const double* norms, const LambTrust& t, Stream stream) {
  lamb_apply_kernel<C><<<chunks_of(l), kThreads, 0, to_cuda(stream)>>>(l, norms, t);
  ZT_CUDA_CHECK_LAUNCH();
}

}  // namespace

void lamb_moments(std::span<const cpu::Run> runs, std::span<const cpu::LambConsts> consts,
                  double* norms, Device device, Stream stream) {
  CudaDeviceGuard guard(device);
  if (runs.empty()) return;
  ZT_CUDA_CHECK(cudaMemsetAsync(norms, 0, 2 * runs.size() * sizeof(double), to_cuda(stream)));
  const std::vector<LambList> lists = make_lists(runs, consts);
  const int64_t n_slots = total_slots(lists);
  if (n_slots == 0) return;
  // [n_slots, 2] f64 (as i64 storage): each chunk's sum p^2 and sum u^2.
  Tensor scratch = Tensor::empty({2 * n_slots}, DType::i64, device, stream);
  auto* slots = static_cast<double*>(scratch.data());
  for (const LambList& l : lists) {
    const cudaStream_t s = to_cuda(stream);
    if (l.grad_dtype == DType::f32)
      lamb_moments_kernel<float><<<chunks_of(l), kThreads, 0, s>>>(l, slots);
    else if (l.grad_dtype == DType::bf16)
      lamb_moments_kernel<__nv_bfloat16><<<chunks_of(l), kThreads, 0, s>>>(l, slots);
    else
      lamb_moments_kernel<__half><<<chunks_of(l), kThreads, 0, s>>>(l, slots);
    ZT_CUDA_CHECK_LAUNCH();
  }
  for (const LambList& l : lists) {
    lamb_norms_kernel<<<static_cast<unsigned int>(l.count), kThreads, 0, to_cuda(stream)>>>(
        l, slots, norms);
    ZT_CUDA_CHECK_LAUNCH();
  }
}

void lamb_apply(std::span<const cpu::Run> runs, std::span<const cpu::LambConsts> consts,
                const double* norms, const LambTrust& trust, Device device, Stream stream) {
  CudaDeviceGuard guard(device);
  for (const LambList& l : make_lists(runs, consts)) {
    if (!l.has_copy)
      launch_apply<NoCopy>(l, norms, trust, stream);
    else if (l.copy_dtype == DType::bf16)
      launch_apply<__nv_bfloat16>(l, norms, trust, stream);
    else
      launch_apply<__half>(l, norms, trust, stream);
  }
}

void lamb(std::span<const cpu::Run> runs, std::span<const cpu::LambConsts> consts,
          const LambTrust& trust, Device device, Stream stream) {
  if (runs.empty()) return;
  // [runs, 2] f64 (as i64 storage): each run's sum p^2 and sum u^2.
  Tensor norms = Tensor::empty({2 * static_cast<int64_t>(runs.size())}, DType::i64, device, stream);
  lamb_moments(runs, consts, static_cast<double*>(norms.data()), device, stream);
  lamb_apply(runs, consts, static_cast<const double*>(norms.data()), trust, device, stream);
}

}  // namespace zt::optim::cuda
