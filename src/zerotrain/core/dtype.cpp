#include "zerotrain/core/dtype.h"

#include <cmath>

#include "zerotrain/core/error.h"

namespace zt {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::f32:
      return 4;
    case DType::f16:
      return 2;
    case DType::bf16:
      return 2;
    case DType::i32:
      return 4;
    case DType::i64:
      return 8;
    case DType::u8:
      return 1;
  }
  return 0;
}

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::f32:
      return "f32";
    case DType::f16:
      return "f16";
    case DType::bf16:
      return "bf16";
    case DType::i32:
      return "i32";
    case DType::i64:
      return "i64";
    case DType::u8:
      return "u8";
  }
  return "?";
}

DType parse_dtype(std::string_view n) {
  if (n == "f32" || n == "fp32" || n == "float32" || n == "float") return DType::f32;
  if (n == "f16" || n == "fp16" || n == "float16" || n == "half") return DType::f16;
  if (n == "bf16" || n == "bfloat16") return DType::bf16;
  if (n == "i32" || n == "int32") return DType::i32;
  if (n == "i64" || n == "int64") return DType::i64;
  if (n == "u8" || n == "uint8") return DType::u8;
  throw ValueError("dtype",
                   str("unknown dtype \"", n, "\"; expected one of f32, f16, bf16, i32, i64, u8"));
}

bool is_floating(DType t) {
  return t == DType::f32 || t == DType::f16 || t == DType::bf16;
}

void store_from_float(void* p, DType t, size_t i, float v) {
  switch (t) {
    case DType::f32:
      static_cast<float*>(p)[i] = v;
      return;
    case DType::f16:
      static_cast<uint16_t*>(p)[i] = f16::from_float(v);
      return;
    case DType::bf16:
      static_cast<uint16_t*>(p)[i] = bf16::from_float(v);
      return;
    case DType::i32:
      static_cast<int32_t*>(p)[i] = static_cast<int32_t>(std::lrint(v));
      return;
    case DType::i64:
      static_cast<int64_t*>(p)[i] = static_cast<int64_t>(std::llrint(v));
      return;
    case DType::u8:
      static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(std::lrint(v));
      return;
  }
}

}  // namespace zt
