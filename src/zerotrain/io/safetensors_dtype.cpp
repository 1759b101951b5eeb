// The safetensors dtype table: names, sizes, and the mapping to zerotrain dtypes.
#include "zerotrain/io/safetensors_dtype.h"

#include <array>

namespace zt::io {

namespace {
struct DTypeRow {
  StDType st;
  std::string_view name;
  size_t size;
};
constexpr std::array<DTypeRow, 15> kRows{{
    {StDType::BOOL, "BOOL", 1},
    {StDType::U8, "U8", 1},
    {StDType::I8, "I8", 1},
    {StDType::F8_E5M2, "F8_E5M2", 1},
    {StDType::F8_E4M3, "F8_E4M3", 1},
    {StDType::I16, "I16", 2},
    {StDType::U16, "U16", 2},
    {StDType::F16, "F16", 2},
    {StDType::BF16, "BF16", 2},
    {StDType::I32, "I32", 4},
    {StDType::U32, "U32", 4},
    {StDType::F32, "F32", 4},
    {StDType::F64, "F64", 8},
    {StDType::I64, "I64", 8},
    {StDType::U64, "U64", 8},
}};
static_assert(
    [] {
      for (size_t i = 0; i < kRows.size(); ++i)
        if (static_cast<size_t>(kRows[i].st) != i) return false;
      return true;
    }(),
    "kRows must follow StDType's order");
}  // namespace

std::string_view st_dtype_name(StDType t) {
  return kRows[static_cast<size_t>(t)].name;
}

size_t st_dtype_size(StDType t) {
  return kRows[static_cast<size_t>(t)].size;
}

std::optional<StDType> parse_st_dtype(std::string_view name) {
  for (const DTypeRow& r : kRows)
    if (r.name == name) return r.st;
  return std::nullopt;
}

std::optional<DType> to_dtype(StDType t) {
  switch (t) {
    case StDType::F32:
      return DType::f32;
    case StDType::F16:
      return DType::f16;
    case StDType::BF16:
      return DType::bf16;
    case StDType::I32:
      return DType::i32;
    case StDType::I64:
      return DType::i64;
    case StDType::U8:
      return DType::u8;
    default:
      return std::nullopt;
  }
}

StDType to_st_dtype(DType t) {
  switch (t) {
    case DType::f32:
      return StDType::F32;
    case DType::f16:
      return StDType::F16;
    case DType::bf16:
      return StDType::BF16;
    case DType::i32:
      return StDType::I32;
    case DType::i64:
      return StDType::I64;
    case DType::u8:
      return StDType::U8;
  }
  return StDType::U8;
}

}  // namespace zt::io
