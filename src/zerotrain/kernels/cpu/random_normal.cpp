// CPU random normal fill: chunks of 64 blocks of four elements ([Note: counter-based normals] in
// kernels/philox.h) shared out over OpenMP threads; within a chunk the generator runs as a loop
// over the blocks that the compiler vectorizes for the CPU's widest instruction set
// (random_normal_chunk.h). Each element depends only on its index, so neither the thread count,
// the vector width nor the range's start changes a bit.
// Tested by tests/kernels/test_random_normal.cpp.
#include "zerotrain/kernels/cpu/random_normal.h"

#include <algorithm>

#include "zerotrain/core/half.h"
#include "zerotrain/kernels/cpu/random_normal_chunk.h"

namespace zt::kernels::cpu {

namespace {

struct StoreF32 {
  using type = float;
  static float store(float x) { return x; }
};
struct StoreBf16 {
  using type = uint16_t;
  static uint16_t store(float x) { return bf16::from_float(x); }
};
struct StoreF16 {
  using type = uint16_t;
  static uint16_t store(float x) { return f16::from_float(x); }
};

template <typename S>
void fill(void* dst_v, int64_t n, uint64_t seed, uint64_t stream_id, int64_t first, float std) {
  auto* dst = static_cast<typename S::type*>(dst_v);
  const auto first_block = static_cast<uint64_t>(first) / 4;
  const auto end_block = (static_cast<uint64_t>(first + n) + 3) / 4;
  constexpr int64_t m = kNormalChunkBlocks;
  const auto chunks = static_cast<int64_t>((end_block - first_block + m - 1) / m);
  const NormalChunkFn chunk = best_normal_chunk();
#pragma omp parallel for schedule(static, 16)
  for (int64_t c = 0; c < chunks; ++c) {
    const uint64_t block0 = first_block + static_cast<uint64_t>(c * m);
    float z[4 * m];
    chunk(seed, stream_id, block0, std, z);
    const auto base = static_cast<int64_t>(block0 * 4) - first;  // dst index of the chunk's start
    const int64_t lo = std::max<int64_t>(0, -base);
    const int64_t hi = std::min<int64_t>(4 * m, n - base);
    for (int64_t k = lo; k < hi; ++k)
      dst[base + k] = S::store(z[(k % 4) * m + k / 4]);
  }
}

}  // namespace

void random_normal(Tensor& dst, uint64_t seed, uint64_t stream_id, int64_t first, float std) {
  const int64_t n = dst.numel();
  switch (dst.dtype()) {
    case DType::f32:
      fill<StoreF32>(dst.data(), n, seed, stream_id, first, std);
      break;
    case DType::bf16:
      fill<StoreBf16>(dst.data(), n, seed, stream_id, first, std);
      break;
    case DType::f16:
      fill<StoreF16>(dst.data(), n, seed, stream_id, first, std);
      break;
    default:
      throw DTypeError("random_normal", str("unsupported dtype ", dtype_name(dst.dtype())));
  }
}

}  // namespace zt::kernels::cpu
