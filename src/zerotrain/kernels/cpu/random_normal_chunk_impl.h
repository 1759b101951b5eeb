// The body of kernels/cpu/random_normal_chunk.h's loop, included by its per-ISA translation units.
#pragma once

#include "zerotrain/kernels/cpu/random_normal_chunk.h"
#include "zerotrain/kernels/philox.h"

namespace zt::kernels::cpu {
namespace {  // one copy per translation unit, each built for its instruction set

void normal_chunk_impl(uint64_t seed, uint64_t stream_id, uint64_t block0, float std, float* out) {
  const auto k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  const auto s0 = static_cast<uint32_t>(stream_id), s1 = static_cast<uint32_t>(stream_id >> 32);
  constexpr int64_t n = kNormalChunkBlocks;
  for (int64_t j = 0; j < n; ++j) {
    const uint64_t block = block0 + static_cast<uint64_t>(j);
    const philox::Words w = philox::philox4x32_10(
        {{static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32), s0, s1}}, k0, k1);
    float z0, z1, z2, z3;
    philox::box_muller(w.w[0], w.w[1], z0, z1);
    philox::box_muller(w.w[2], w.w[3], z2, z3);
    out[j] = philox::mul_rn(std, z0);
    out[n + j] = philox::mul_rn(std, z1);
    out[2 * n + j] = philox::mul_rn(std, z2);
    out[3 * n + j] = philox::mul_rn(std, z3);
  }
}

}  // namespace
}  // namespace zt::kernels::cpu
