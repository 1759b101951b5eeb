// The one global gradient norm every ZeRO stage clips with. Tested by
// tests/zero/test_grad_norm.cpp and, for equality across stages, tests/mpi/test_zero_parity.cpp.
//
// [Note: chunked gradient norm]
// Stage 0 holds full gradients, the sharded stages only their shard of each flat group, yet the
// clip coefficient must be bitwise the same in every stage (the parity tests compare final weights
// byte for byte). So the norm has one definition that does not depend on who holds what:
// - a group's flat gradient (its parameters' gradients back to back, see param_group.h) is cut
//   into kNormChunk-element chunks from its first element; each chunk's sum of squares is taken
//   in a fixed order (kernels::chunk_sum_squares) and rounded to f32;
// - norm^2 is the f64 sum of those partials, group by group in block order, chunk by chunk.
// Shards are multiples of kNormChunk, so no chunk straddles two ranks; a rank's shard padding is
// zeros, and zeros leave a partial unchanged. Stage 0 computes every partial itself; a sharded
// stage computes its own chunks' partials and all-gathers them, then every rank adds them in the
// same global order.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "zerotrain/core/tensor.h"

namespace zt::zero {

inline constexpr int64_t kNormChunk = 4096;

// Number of chunks of an n-element flat buffer.
inline int64_t norm_chunks(int64_t n) {
  return (n + kNormChunk - 1) / kNormChunk;
}

// Writes the partials of `grad` (contiguous, 1-D) into `out` (f32 [norm_chunks(numel)]).
void norm_partials(const Tensor& grad, Tensor out, Stream stream = {});

// `partials` (f32, contiguous) where the host can read them: a host tensor as it lies; a device
// tensor copied into `host` (made on first use, page-locked where a GPU exists, so the copy is one
// asynchronous transfer and no step allocates) and waited for. The span views `partials` or `host`.
std::span<const float> partials_on_host(const Tensor& partials, Tensor& host, Stream stream);

// sqrt of the f64 sum of `partials` in order.
double norm_from_partials(std::span<const float> partials);

// The same from partials all-gathered over `world` ranks: rank r's block holds, for each group g,
// chunks_per_shard[g] partials of its shard; they are added group by group, rank by rank.
double norm_from_gathered(std::span<const float> gathered,
                          const std::vector<int64_t>& chunks_per_shard, int world);

}  // namespace zt::zero
