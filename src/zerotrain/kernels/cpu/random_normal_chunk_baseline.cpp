// The random normal chunk for any x86-64 (or other) CPU, and the run-time choice among the
// instruction sets; see random_normal_chunk.h.
#include "zerotrain/kernels/cpu/random_normal_chunk_impl.h"

namespace zt::kernels::cpu {

void normal_chunk_baseline(uint64_t seed, uint64_t stream_id, uint64_t block0, float std,
                           float* out) {
  normal_chunk_impl(seed, stream_id, block0, std, out);
}

NormalChunkFn best_normal_chunk() {
  static const NormalChunkFn best = [] {
    if (NormalChunkFn f = normal_chunk_avx512()) return f;
    if (NormalChunkFn f = normal_chunk_avx2()) return f;
    return &normal_chunk_baseline;
  }();
  return best;
}

}  // namespace zt::kernels::cpu
