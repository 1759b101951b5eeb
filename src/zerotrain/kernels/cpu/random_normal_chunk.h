// The inner loop of the CPU random normal fill, compiled once per instruction set
// (random_normal_chunk_{baseline,avx2,avx512}.cpp, each with its flags in
// src/zerotrain/CMakeLists.txt) and picked at run time by what the CPU supports. Every build of it
// rounds alike: the loop is kernels/philox.h's float operations, vectorized without fused
// multiply-adds (-ffp-contract=off; -fno-trapping-math only lets the compiler evaluate both sides
// of a select). Tested by tests/kernels/test_random_normal.cpp (every ISA bitwise equal).
#pragma once

#include <cstdint>

namespace zt::kernels::cpu {

inline constexpr int64_t kNormalChunkBlocks = 64;  // blocks of four elements per call

// out[lane * kNormalChunkBlocks + j] = std x element 4 (block0 + j) + lane of the stream.
using NormalChunkFn = void (*)(uint64_t seed, uint64_t stream_id, uint64_t block0, float std,
                               float* out);

void normal_chunk_baseline(uint64_t seed, uint64_t stream_id, uint64_t block0, float std,
                           float* out);
// Null when this build or the running CPU lacks the instruction set.
NormalChunkFn normal_chunk_avx2();
NormalChunkFn normal_chunk_avx512();
// The widest of the three that the running CPU supports.
NormalChunkFn best_normal_chunk();

}  // namespace zt::kernels::cpu
