// The summation order of embedding_backward, shared by the CPU and CUDA kernels so that both give
// the same bits.
//
// [Note: embedding gradient order]
// Tokens are stably sorted by id (ties keep token order) and the sorted list is cut into chunks of
// kEmbeddingGradChunk positions. A run of equal ids that lies inside one chunk is summed in token
// order (f32, starting from 0). A run that crosses chunk boundaries is summed piece by piece, one
// piece per chunk, each in token order, and the piece sums are then added in order. The run's total
// is added to the dtable row once: dtable[id] = dtable[id] + total, rounded to dtable's dtype.
// The pieces bound the serial work per id (a batch full of one padding id stays parallel).
#pragma once

#include <cstdint>

namespace zt::kernels {

constexpr int64_t kEmbeddingGradChunk = 64;

}  // namespace zt::kernels
