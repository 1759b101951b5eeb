// Host-side 16-bit float storage types (bf16, f16) with round-to-nearest-even conversion.
// Layout matches CUDA's __nv_bfloat16 / __half, so buffers move between host and device as is.
#pragma once

#include <cstdint>
#include <cstring>

namespace zt {

// Brain float: fp32 with the low 16 mantissa bits dropped.
struct bf16 {
  uint16_t bits = 0;

  bf16() = default;
  explicit bf16(float f) : bits(from_float(f)) {}
  explicit operator float() const { return to_float(bits); }

  static uint16_t from_float(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u)
      return static_cast<uint16_t>((u >> 16) | 0x40u);  // quiet NaN
    u += 0x7fffu + ((u >> 16) & 1u);                    // round to nearest, ties to even
    return static_cast<uint16_t>(u >> 16);
  }
  static float to_float(uint16_t b) {
    uint32_t u = static_cast<uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
};

// IEEE 754 binary16.
struct f16 {
  uint16_t bits = 0;

  f16() = default;
  explicit f16(float f) : bits(from_float(f)) {}
  explicit operator float() const { return to_float(bits); }

  static uint16_t from_float(float f);
  static float to_float(uint16_t h);
};

static_assert(sizeof(bf16) == 2 && sizeof(f16) == 2);

}  // namespace zt
