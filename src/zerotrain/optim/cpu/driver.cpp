// OpenMP over blocks of runs; see driver.h. Tested by tests/optim/test_cpu_isa.cpp.
#include "zerotrain/optim/cpu/driver.h"

#include <algorithm>

#include "zerotrain/core/error.h"

namespace zt::optim::cpu {

namespace {

// Calls fn(run index, block index, lo, hi) for every block of every run. schedule(static) hands
// each thread one contiguous range of blocks, so a thread streams through its part of memory.
template <class R, class Fn>
void for_blocks(std::span<const R> runs, Fn&& fn) {
  std::vector<int64_t> first(runs.size() + 1, 0);  // first[r]: index of run r's first block
  for (size_t r = 0; r < runs.size(); ++r)
    first[r + 1] = first[r] + (runs[r].n + kBlock - 1) / kBlock;
  const int64_t blocks = first.back();
  int64_t elements = 0;
  for (const R& r : runs)
    elements += r.n;
    // Small steps (many short runs) stay on one thread: a parallel region costs more than they do.
#pragma omp parallel for schedule(static) if (elements >= 2 * kBlock)
  for (int64_t b = 0; b < blocks; ++b) {
    const auto r =
        static_cast<size_t>(std::upper_bound(first.begin(), first.end(), b) - first.begin() - 1);
    const int64_t lo = (b - first[r]) * kBlock;
    fn(r, b, lo, std::min(runs[r].n, lo + kBlock));
  }
}

bool cpu_has_avx2() {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
         __builtin_cpu_supports("f16c");
#else
  return false;
#endif
}

bool cpu_has_avx512() {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
#else
  return false;
#endif
}

const KernelTable* table_if_supported(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::scalar:
      return kernels_scalar();
    case CpuIsa::avx2:
      return cpu_has_avx2() ? kernels_avx2() : nullptr;
    case CpuIsa::avx512:
      return cpu_has_avx512() ? kernels_avx512() : nullptr;
    case CpuIsa::best:
      return table_if_supported(best_cpu_isa());
  }
  return nullptr;
}

}  // namespace

const KernelTable& kernel_table(CpuIsa isa) {
  const KernelTable* t = table_if_supported(isa);
  if (!t)
    throw ValueError(
        "optim", str("cpu isa ", cpu_isa_name(isa), ": not supported by this CPU or this build"));
  return *t;
}

void adam(std::span<const Run> runs, std::span<const AdamConsts> consts, const KernelTable& k) {
  for_blocks(
      runs, [&](size_t r, int64_t, int64_t lo, int64_t hi) { k.adam(runs[r], lo, hi, consts[r]); });
}

void adam_lowp(std::span<const RunLowp> runs, std::span<const AdamConsts> consts,
               const KernelTable& k) {
  for_blocks(runs, [&](size_t r, int64_t, int64_t lo, int64_t hi) {
    k.adam_lowp(runs[r], lo, hi, consts[r]);
  });
}

void lion(std::span<const Run> runs, std::span<const LionConsts> consts, const KernelTable& k) {
  for_blocks(
      runs, [&](size_t r, int64_t, int64_t lo, int64_t hi) { k.lion(runs[r], lo, hi, consts[r]); });
}

void sgd(std::span<const Run> runs, std::span<const SgdConsts> consts, const KernelTable& k) {
  for_blocks(runs,
             [&](size_t r, int64_t, int64_t lo, int64_t hi) { k.sgd(runs[r], lo, hi, consts[r]); });
}

std::vector<LambNorms> lamb_moments(std::span<const Run> runs, std::span<const LambConsts> consts,
                                    const KernelTable& k) {
  std::vector<LambNorms> per_block;
  std::vector<size_t> run_of_block;
  for (size_t r = 0; r < runs.size(); ++r)
    run_of_block.insert(run_of_block.end(), static_cast<size_t>((runs[r].n + kBlock - 1) / kBlock),
                        r);
  per_block.resize(run_of_block.size());
  for_blocks(runs, [&](size_t r, int64_t b, int64_t lo, int64_t hi) {
    per_block[static_cast<size_t>(b)] = k.lamb_moments(runs[r], lo, hi, consts[r]);
  });
  std::vector<LambNorms> out(runs.size());
  for (size_t b = 0; b < per_block.size(); ++b) {
    out[run_of_block[b]].param_sq += per_block[b].param_sq;
    out[run_of_block[b]].update_sq += per_block[b].update_sq;
  }
  return out;
}

void lamb_apply(std::span<const Run> runs, std::span<const LambConsts> consts,
                const KernelTable& k) {
  for_blocks(runs, [&](size_t r, int64_t, int64_t lo, int64_t hi) {
    k.lamb_apply(runs[r], lo, hi, consts[r]);
  });
}

}  // namespace zt::optim::cpu

namespace zt::optim {

bool cpu_isa_supported(CpuIsa isa) {
  return cpu::table_if_supported(isa) != nullptr;
}

CpuIsa best_cpu_isa() {
  if (cpu::cpu_has_avx512() && cpu::kernels_avx512()) return CpuIsa::avx512;
  if (cpu::cpu_has_avx2() && cpu::kernels_avx2()) return CpuIsa::avx2;
  return CpuIsa::scalar;
}

const char* cpu_isa_name(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::best:
      return "best";
    case CpuIsa::scalar:
      return "scalar";
    case CpuIsa::avx2:
      return "avx2";
    case CpuIsa::avx512:
      return "avx512";
  }
  return "?";
}

}  // namespace zt::optim
