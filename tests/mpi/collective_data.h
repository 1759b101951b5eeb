// Rank-seeded inputs and their expected reductions for the multi-rank collective tests. Values are
// chosen so that sums over up to 8 ranks are exact in f32: the expected result is the exact sum
// rounded once to the dtype, computed here without the library's reduction code.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

#include "zerotrain/core/dtype.h"

namespace zt::test {

// k/8 with |k| <= 127 (exact in bf16 and f16) for floats; spread integers for the others.
inline double input_value(DType t, int rank, size_t i) {
  const auto r = static_cast<int64_t>(rank);
  const auto k = static_cast<int64_t>(i);
  switch (t) {
    case DType::f32:
    case DType::bf16:
    case DType::f16:
      return static_cast<double>((r * 37 + k * 11) % 255 - 127) / 8.0;
    case DType::i32:
      return static_cast<double>(r * 100003 - k * 7);
    case DType::i64:
      return static_cast<double>((r << 33) + k);
    case DType::u8:
      return static_cast<double>((r * 97 + k * 13) % 256);
  }
  return 0;
}

// Bytes of n elements of dtype t with values f(i) (integers: wrapped to the type's width).
inline std::vector<uint8_t> make_buffer(DType t, size_t n, const std::function<double(size_t)>& f) {
  std::vector<uint8_t> b(n * dtype_size(t));
  for (size_t i = 0; i < n; ++i) {
    double v = f(i);
    switch (t) {
      case DType::i32: {
        auto x = static_cast<int32_t>(static_cast<uint32_t>(static_cast<int64_t>(v)));
        std::memcpy(b.data() + 4 * i, &x, 4);
        break;
      }
      case DType::i64: {
        auto x = static_cast<int64_t>(v);
        std::memcpy(b.data() + 8 * i, &x, 8);
        break;
      }
      case DType::u8:
        b[i] = static_cast<uint8_t>(static_cast<int64_t>(v) & 0xff);
        break;
      default:
        store_from_float(b.data(), t, i, static_cast<float>(v));
    }
  }
  return b;
}

inline std::vector<uint8_t> rank_input(DType t, int rank, size_t n) {
  return make_buffer(t, n, [&](size_t i) { return input_value(t, rank, i); });
}

// Sum (or avg) over ranks 0..world-1 of input_value, rounded to the dtype.
inline std::vector<uint8_t> expected_reduction(DType t, int world, size_t n, bool avg) {
  return make_buffer(t, n, [&](size_t i) {
    double s = 0;
    for (int r = 0; r < world; ++r)
      s += input_value(t, r, i);
    return avg ? s / world : s;
  });
}

}  // namespace zt::test
