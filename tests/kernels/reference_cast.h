// Inputs and expected bits for the cast tests (test_cast.cpp, test_cast_cuda.cpp): random values
// mixed with the special ones (signed zeros, infinities, NaNs with payloads, f32 and f16
// subnormals, rounding ties, values that overflow f16), and the per-element reference built
// directly from core/half.h.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "support/test_util.h"

namespace zt::test {

inline float float_from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline std::vector<float> special_floats() {
  const float inf = std::numeric_limits<float>::infinity();
  return {0.0f,
          -0.0f,
          inf,
          -inf,
          float_from_bits(0x7fc00000u),
          float_from_bits(0xffc00001u),
          float_from_bits(0x7f800001u),  // signalling NaN with a payload
          float_from_bits(0x7fa12345u),
          1.0f,
          -1.0f,
          1.0f + 1.0f / 256,
          1.0f + 3.0f / 256,
          1.0f + 1.0f / 2048,
          1.0f + 3.0f / 2048,
          65504.0f,
          65519.0f,
          65520.0f,
          70000.0f,
          -1e9f,
          3.0e38f,
          std::numeric_limits<float>::max(),
          std::numeric_limits<float>::min(),
          std::numeric_limits<float>::denorm_min(),
          -1e-40f,
          6.0e-8f,
          5.96e-8f,
          2.98e-8f,
          2.9802322e-8f,
          1e-8f,
          -3.0e-5f,
          6.1e-5f,
          6.103515625e-05f,
          1e-4f,
          0.1f,
          3.14159265f};
}

// `n` floats: the special values first, then random ones over several magnitudes.
inline std::vector<float> cast_inputs(size_t n, uint64_t seed) {
  std::vector<float> v = special_floats();
  const std::vector<float> big = random_floats(n, seed, -70000.0f, 70000.0f);
  const std::vector<float> mid = random_floats(n, seed + 1, -2.0f, 2.0f);
  const std::vector<float> tiny = random_floats(n, seed + 2, -1e-4f, 1e-4f);
  for (size_t i = 0; v.size() < n; ++i) {
    const size_t r = i % 3;
    v.push_back(r == 0 ? mid[i] : r == 1 ? tiny[i] : big[i]);
  }
  v.resize(n);
  return v;
}

// A host tensor of dtype `d` holding `values` (rounded by core/half.h when 16-bit).
inline Tensor host_tensor(const std::vector<float>& values, DType d) {
  return Tensor::from_floats(values, {static_cast<int64_t>(values.size())}, d);
}

// The expected destination bits of each element of `src`, from core/half.h.
inline std::vector<uint32_t> expected_cast_bits(const Tensor& src, DType dst) {
  std::vector<uint32_t> out;
  const size_t n = static_cast<size_t>(src.numel());
  for (size_t i = 0; i < n; ++i) {
    const float f = load_as_float(src.data(), src.dtype(), i);
    uint32_t bits = 0;
    if (dst == DType::f32) std::memcpy(&bits, &f, 4);
    if (dst == DType::f16) bits = f16::from_float(f);
    if (dst == DType::bf16) bits = bf16::from_float(f);
    out.push_back(bits);
  }
  return out;
}

// The raw bits of each element of a host tensor.
inline std::vector<uint32_t> element_bits(const Tensor& t) {
  std::vector<uint32_t> out;
  const auto* p = static_cast<const unsigned char*>(t.data());
  const size_t size = t.element_size();
  for (int64_t i = 0; i < t.numel(); ++i) {
    uint32_t bits = 0;
    std::memcpy(&bits, p + static_cast<size_t>(i) * size, size);
    out.push_back(bits);
  }
  return out;
}

}  // namespace zt::test
