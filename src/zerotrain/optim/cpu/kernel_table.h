// The CPU optimizer kernels of one instruction set, as a table of functions over one block
// [lo, hi) of one run. optim/cpu/driver.cpp shares the blocks out over OpenMP threads and picks the
// table at run time (CpuIsa); kernels_scalar.cpp, kernels_avx2.cpp and kernels_avx512.cpp each
// build one table from kernels_impl.h. Tested by tests/optim/test_cpu_isa.cpp.
#pragma once

#include <cstdint>

#include "zerotrain/optim/cpu/consts.h"
#include "zerotrain/optim/optimizers.h"

namespace zt::optim::cpu {

struct KernelTable {
  void (*adam)(const Run& r, int64_t lo, int64_t hi, const AdamConsts& c);
  void (*lion)(const Run& r, int64_t lo, int64_t hi, const LionConsts& c);
  void (*sgd)(const Run& r, int64_t lo, int64_t hi, const SgdConsts& c);
  // Updates m and v, returns the block's sum p^2 and sum u^2.
  LambNorms (*lamb_moments)(const Run& r, int64_t lo, int64_t hi, const LambConsts& c);
  void (*lamb_apply)(const Run& r, int64_t lo, int64_t hi, const LambConsts& c);
  // Adam on bf16 values and moments (optim/low_precision.h).
  void (*adam_lowp)(const RunLowp& r, int64_t lo, int64_t hi, const AdamConsts& c);
};

// The tables; avx2 / avx512 return null when the build has no such code path (not x86-64).
const KernelTable* kernels_scalar();
const KernelTable* kernels_avx2();
const KernelTable* kernels_avx512();

}  // namespace zt::optim::cpu
