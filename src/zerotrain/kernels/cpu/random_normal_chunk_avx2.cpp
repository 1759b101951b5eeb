// The random normal chunk built for AVX2 (flags in src/zerotrain/CMakeLists.txt), used only on CPUs
// that have it; see random_normal_chunk.h.
#include "zerotrain/kernels/cpu/random_normal_chunk_impl.h"

namespace zt::kernels::cpu {

#if defined(__AVX2__)
namespace {
void chunk_avx2(uint64_t seed, uint64_t stream_id, uint64_t block0, float std, float* out) {
  normal_chunk_impl(seed, stream_id, block0, std, out);
}
}  // namespace
#endif

NormalChunkFn normal_chunk_avx2() {
#if defined(__AVX2__)
  static const bool supported = __builtin_cpu_supports("avx2");
  return supported ? &chunk_avx2 : nullptr;
#else
  return nullptr;
#endif
}

}  // namespace zt::kernels::cpu
