// Host dispatch over the floating tensor dtypes for the CPU kernels: visit_float(dtype, fn) calls
// fn(T{}) with T = float, zt::f16 or zt::bf16. All three convert with static_cast<float>(v) and
// T(float), so one template body serves every dtype.
#pragma once

#include <string_view>

#include "zerotrain/core/dtype.h"
#include "zerotrain/core/error.h"

namespace zt::kernels::cpu {

template <typename Fn>
void visit_float(DType t, std::string_view op, Fn&& fn) {
  switch (t) {
    case DType::f32:
      fn(float{});
      return;
    case DType::f16:
      fn(f16{});
      return;
    case DType::bf16:
      fn(bf16{});
      return;
    default:
      throw DTypeError(op, str("unsupported dtype ", dtype_name(t)));
  }
}

// The value a tensor of element type T holds after storing v (identity for float).
template <typename T>
inline float round_to(float v) {
  return static_cast<float>(T(v));
}

}  // namespace zt::kernels::cpu
