// CPU random normal fill: the blocks of four elements ([Note: counter-based normals] in
// kernels/philox.h) shared out over OpenMP threads in fixed chunks; each element depends only on
// its index, so neither the thread count nor the range's start changes a bit. Built with
// -ffp-contract=off (src/zerotrain/CMakeLists.txt). Tested by tests/kernels/test_random_normal.cpp.
#include "zerotrain/kernels/cpu/random_normal.h"

#include <algorithm>

#include "zerotrain/core/half.h"
#include "zerotrain/kernels/philox.h"

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
  const auto blocks = static_cast<int64_t>(end_block - first_block);
#pragma omp parallel for schedule(static, 4096)
  for (int64_t b = 0; b < blocks; ++b) {
    const uint64_t block = first_block + static_cast<uint64_t>(b);
    float z[4];
    philox::normal_block(seed, stream_id, block, z);
    const auto base = static_cast<int64_t>(block * 4) - first;  // index of lane 0 in dst
    const int64_t lo = std::max<int64_t>(0, -base);
    const int64_t hi = std::min<int64_t>(4, n - base);
    for (int64_t lane = lo; lane < hi; ++lane)
      dst[base + lane] = S::store(philox::mul_rn(std, z[lane]));
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
