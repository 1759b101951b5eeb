// Spacing of representable values of a floating dtype, for "within one ulp" comparisons in the
// elementwise and reduction tests.
#pragma once

#include <algorithm>
#include <cmath>

#include "zerotrain/core/dtype.h"

namespace zt::test {

// Spacing of `dtype` values at magnitude |v| (subnormal spacing below the smallest normal).
inline double ulp_of(DType dtype, double v) {
  const int mantissa = dtype == DType::f32 ? 23 : dtype == DType::f16 ? 10 : 7;
  const int min_exp = dtype == DType::f16 ? -14 : -126;
  int e = 0;
  std::frexp(std::fabs(v), &e);  // |v| = m 2^e, m in [0.5, 1)
  return std::ldexp(1.0, std::max(e - 1, min_exp) - mantissa);
}

}  // namespace zt::test
