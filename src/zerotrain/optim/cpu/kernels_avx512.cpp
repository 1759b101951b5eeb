// The AVX-512 CPU optimizer kernels: kernels_impl.h over V512. Compiled with -mavx512f/bw/vl/dq
// (src/zerotrain/CMakeLists.txt) and called only on CPUs that have them; see
// [Note: ISA translation units]. Tested by tests/optim/test_cpu_isa.cpp.
#include "zerotrain/optim/cpu/kernels_impl.h"

namespace zt::optim::cpu {

const KernelTable* kernels_avx512() {
#if defined(__AVX512F__) && defined(__AVX512BW__)
  return make_table<V512>();
#else
  return nullptr;
#endif
}

}  // namespace zt::optim::cpu
