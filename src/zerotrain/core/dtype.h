// Element types a Tensor can hold.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "zerotrain/core/half.h"

namespace zt {

enum class DType : uint8_t { f32, f16, bf16, i32, i64, u8 };

size_t dtype_size(DType t);
std::string_view dtype_name(DType t);      // "f32", "bf16", ...
DType parse_dtype(std::string_view name);  // accepts "f32"/"float32"/"fp32", "bf16"/"bfloat16", ...
bool is_floating(DType t);

// Compile-time mapping from C++ element type to DType.
template <typename T>
struct DTypeOf;
template <>
struct DTypeOf<float> {
  static constexpr DType value = DType::f32;
};
template <>
struct DTypeOf<f16> {
  static constexpr DType value = DType::f16;
};
template <>
struct DTypeOf<bf16> {
  static constexpr DType value = DType::bf16;
};
template <>
struct DTypeOf<int32_t> {
  static constexpr DType value = DType::i32;
};
template <>
struct DTypeOf<int64_t> {
  static constexpr DType value = DType::i64;
};
template <>
struct DTypeOf<uint8_t> {
  static constexpr DType value = DType::u8;
};

// Host-side load/store of any floating element as float (f32/f16/bf16).
inline float load_as_float(const void* p, DType t, size_t i) {
  switch (t) {
    case DType::f32:
      return static_cast<const float*>(p)[i];
    case DType::f16:
      return f16::to_float(static_cast<const uint16_t*>(p)[i]);
    case DType::bf16:
      return bf16::to_float(static_cast<const uint16_t*>(p)[i]);
    case DType::i32:
      return static_cast<float>(static_cast<const int32_t*>(p)[i]);
    case DType::i64:
      return static_cast<float>(static_cast<const int64_t*>(p)[i]);
    case DType::u8:
      return static_cast<float>(static_cast<const uint8_t*>(p)[i]);
  }
  return 0.f;
}
void store_from_float(void* p, DType t, size_t i, float v);

}  // namespace zt
