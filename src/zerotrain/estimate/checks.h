// Argument checks shared by the estimators: each throws ValueError("[estimate] <name>: ...") that
// shows the bad value. Tested through every estimator's bad-input tests.
#pragma once

#include <cmath>
#include <cstdint>
#include <string_view>

#include "zerotrain/core/error.h"

namespace zt::estimate {

inline constexpr std::string_view kComponent = "estimate";

inline void require_positive(double v, std::string_view name) {
  if (!(v > 0) || !std::isfinite(v))
    throw ValueError(kComponent, str(name, ": must be a finite number > 0, got ", v));
}

inline void require_positive(int64_t v, std::string_view name) {
  if (v <= 0) throw ValueError(kComponent, str(name, ": must be > 0, got ", v));
}

inline void require_non_negative(double v, std::string_view name) {
  if (!(v >= 0) || !std::isfinite(v))
    throw ValueError(kComponent, str(name, ": must be a finite number >= 0, got ", v));
}

}  // namespace zt::estimate
