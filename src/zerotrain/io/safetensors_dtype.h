// Element types named in safetensors headers, in the reference implementation's order (which is
// also its alignment order: a writer stores higher ones first). zerotrain holds F32, F16, BF16,
// I32, I64 and U8; the others are recognized so that a file holding them opens, lists and reads
// its other tensors, and fails only when such a tensor is read. Tested by
// tests/io/test_safetensors_*.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "zerotrain/core/dtype.h"

namespace zt::io {

enum class StDType : uint8_t {
  BOOL,
  U8,
  I8,
  F8_E5M2,
  F8_E4M3,
  I16,
  U16,
  F16,
  BF16,
  I32,
  U32,
  F32,
  F64,
  I64,
  U64,
};

std::string_view st_dtype_name(StDType t);                     // "BF16"
std::optional<StDType> parse_st_dtype(std::string_view name);  // nullopt for an unknown name
size_t st_dtype_size(StDType t);
std::optional<DType> to_dtype(StDType t);  // nullopt for types a Tensor cannot hold
StDType to_st_dtype(DType t);

}  // namespace zt::io
