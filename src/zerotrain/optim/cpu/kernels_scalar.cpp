// The portable CPU optimizer kernels: kernels_impl.h over VScalar, compiled for the baseline
// target. The reference the SIMD paths must match bitwise (tests/optim/test_cpu_isa.cpp).
#include "zerotrain/optim/cpu/kernels_impl.h"

namespace zt::optim::cpu {

const KernelTable* kernels_scalar() {
  return make_table<VScalar>();
}

}  // namespace zt::optim::cpu
