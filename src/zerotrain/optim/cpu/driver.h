// The CPU side of the optimizers: shares the runs out over OpenMP threads in fixed blocks and runs
// one ISA's kernels on each block, with each run's own constants. Blocks are whole multiples of
// every vector width, so the split never changes a result: the update is per element, and LAMB's
// norms are summed per block then over blocks in order. Tested by tests/optim/test_cpu_isa.cpp.
#pragma once

#include <span>
#include <vector>

#include "zerotrain/optim/cpu/consts.h"
#include "zerotrain/optim/cpu/kernel_table.h"

namespace zt::optim::cpu {

// Elements per block: 64 KiB of f32 master, a multiple of 16.
constexpr int64_t kBlock = 16384;

// The table for `isa` (best: the widest this CPU supports). Throws ValueError for an ISA the CPU
// or the build does not support.
const KernelTable& kernel_table(CpuIsa isa);

void adam(std::span<const Run> runs, std::span<const AdamConsts> consts, const KernelTable& k);
void adam_lowp(std::span<const RunLowp> runs, std::span<const AdamConsts> consts,
               const KernelTable& k);
void lion(std::span<const Run> runs, std::span<const LionConsts> consts, const KernelTable& k);
void sgd(std::span<const Run> runs, std::span<const SgdConsts> consts, const KernelTable& k);
std::vector<LambNorms> lamb_moments(std::span<const Run> runs, std::span<const LambConsts> consts,
                                    const KernelTable& k);
void lamb_apply(std::span<const Run> runs, std::span<const LambConsts> consts,
                const KernelTable& k);

}  // namespace zt::optim::cpu
