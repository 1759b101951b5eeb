// The random normal chunk built for AVX-512 (flags in src/zerotrain/CMakeLists.txt), used only on
// CPUs that have it; see random_normal_chunk.h.
#include "zerotrain/kernels/cpu/random_normal_chunk_impl.h"

namespace zt::kernels::cpu {

#if defined(__AVX512F__) && defined(__AVX512DQ__) && defined(__AVX512VL__) && defined(__AVX512BW__)
namespace {
void chunk_avx512(uint64_t seed, uint64_t stream_id, uint64_t block0, float std, float* out) {
  normal_chunk_impl(seed, stream_id, block0, std, out);
}
}  // namespace
#endif

NormalChunkFn normal_chunk_avx512() {
#if defined(__AVX512F__) && defined(__AVX512DQ__) && defined(__AVX512VL__) && defined(__AVX512BW__)
  static const bool supported =
      __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw");
  return supported ? &chunk_avx512 : nullptr;
#else
  return nullptr;
#endif
}

}  // namespace zt::kernels::cpu
