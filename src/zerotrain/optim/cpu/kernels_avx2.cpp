// The AVX2 CPU optimizer kernels: kernels_impl.h over V256. Compiled with -mavx2 -mfma -mf16c
// (src/zerotrain/CMakeLists.txt) and called only on CPUs that have them; see
// [Note: ISA translation units]. Tested by tests/optim/test_cpu_isa.cpp.
#include "zerotrain/optim/cpu/kernels_impl.h"

namespace zt::optim::cpu {

const KernelTable* kernels_avx2() {
#if defined(__AVX2__) && defined(__F16C__)
  return make_table<V256>();
#else
  return nullptr;
#endif
}

}  // namespace zt::optim::cpu
