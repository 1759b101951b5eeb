// The tensors of the reference files in tests/fixtures/safetensors/, rebuilt in C++ from the same
// closed-form sequences tools/gen_safetensors_fixtures.py uses (keep the two in step).
#pragma once

#include <vector>

#include "support/test_util.h"
#include "zerotrain/io/safetensors.h"

namespace zt::test {

// (i + shift) * scale for i in [0, n), as `dtype` (exact for the values used).
inline Tensor seq(int64_t n, double scale, double shift, DType dtype, const Shape& shape) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[static_cast<size_t>(i)] = static_cast<float>((i + shift) * scale);
  return Tensor::from_floats(v, shape, dtype);
}

inline std::filesystem::path safetensors_fixture(const std::string& name) {
  return fixtures_dir() / "safetensors" / name;
}

// mixed.safetensors (metadata {"format": "pt"}), in the generator's dict order.
inline std::vector<io::NamedTensor> mixed_fixture_tensors() {
  std::vector<int64_t> i32, u8;
  for (int64_t i = 0; i < 5; ++i)
    i32.push_back(i * 1000 - 2000);
  for (int64_t i = 0; i < 9; ++i)
    u8.push_back((i * 29) % 256);
  return {
      {"f32.matrix", seq(15, 0.375, -7, DType::f32, {3, 5})},
      {"f32.scalar", Tensor::from_floats({2.5f}, {}, DType::f32)},
      {"f32.empty", Tensor::zeros({0, 4}, DType::f32)},
      {"a.first", Tensor::from_floats({-0.5f}, {1}, DType::f32)},
      {"f16.odd", seq(7, 0.5, -2.5, DType::f16, {7})},
      {"bf16.cube", seq(24, 0.125, -11, DType::bf16, {2, 3, 4})},
      {"bf16.row", seq(6, 4.0, -3, DType::bf16, {1, 6})},
      {"i32.vec", Tensor::from_ints(i32, {5}, DType::i32)},
      {"i64.big",
       Tensor::from_ints({-(int64_t{1} << 40), 1, (int64_t{1} << 53) + 1, -7}, {2, 2}, DType::i64)},
      {"u8.bytes", Tensor::from_ints(u8, {9}, DType::u8)},
  };
}

// sharded/ (limit 64 bytes, metadata {"format": "pt"}), in the generator's dict order.
inline std::vector<io::NamedTensor> sharded_fixture_tensors() {
  return {
      {"model.embed.weight", seq(10, 0.25, -5, DType::f32, {10})},
      {"model.norm.weight", seq(4, 1.0, 1, DType::f32, {4})},
      {"model.big.weight", seq(25, 0.5, -12, DType::f32, {5, 5})},
      {"model.layers.0.w", seq(12, 2.0, -6, DType::bf16, {3, 4})},
      {"lm_head.weight", seq(4, -1.0, 0, DType::bf16, {4})},
  };
}
inline constexpr uint64_t kShardedFixtureLimit = 64;

}  // namespace zt::test
