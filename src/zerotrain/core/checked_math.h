// Sizes that cannot wrap: products and sums of int64 counts that report overflow instead of
// wrapping (a config's vocab_size 2^62 times hidden_size must not become 0 bytes). Used wherever a
// size comes from a file or a command line: core/tensor.cpp (numel, bytes), nn/model_size.cpp,
// the readers of io/. Tested by tests/core/test_checked_math.cpp.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>

namespace zt {

// a * b, or nothing when the product leaves int64 (or an operand is negative).
inline std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// a + b, or nothing when the sum leaves int64 (or an operand is negative).
inline std::optional<int64_t> checked_add(int64_t a, int64_t b) {
  int64_t r = 0;
  if (a < 0 || b < 0 || __builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// The product of every factor, or nothing when any step leaves int64.
inline std::optional<int64_t> checked_product(std::initializer_list<int64_t> factors) {
  int64_t r = 1;
  for (int64_t f : factors) {
    const std::optional<int64_t> next = checked_mul(r, f);
    if (!next) return std::nullopt;
    r = *next;
  }
  return r;
}

}  // namespace zt
