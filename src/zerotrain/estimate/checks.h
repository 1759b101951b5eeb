// Argument checks shared by the estimators: each throws ValueError("[estimate] <name>: ...") that
// shows the bad value. Tested through every estimator's bad-input tests.
#pragma once

#include <cmath>
#include <cstdint>
#include <string_view>

#include "zerotrain/config/zero_keys.h"
#include "zerotrain/core/error.h"
#include "zerotrain/nn/model_size.h"

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

// A zero_optimization size in elements against its key's least value (config/zero_keys.h), as a
// finite number.
inline void require_zero_size(double v, const config::ZeroSizeKey& key, std::string_view name) {
  if (!(v >= static_cast<double>(key.min)) || !std::isfinite(v))
    throw ValueError(kComponent, str(name, ": must be a finite number >= ", key.min, ", got ", v));
}

// A parameter count: finite, > 0 and at most nn::kMaxModelParams (the ceiling every model config
// is held to), so the byte counts derived from it stay far inside int64.
inline void require_param_count(double v, std::string_view name) {
  require_positive(v, name);
  if (v > static_cast<double>(nn::kMaxModelParams))
    throw ValueError(kComponent, str(name, ": ", v, " parameters is above the ceiling of 2^47 (",
                                     nn::kMaxModelParams, ")"));
}

// DeepSpeed's largest layer is one module of the model: never more parameters than the model.
inline void require_largest_layer(double largest_layer, double params, std::string_view name) {
  require_param_count(largest_layer, name);
  if (largest_layer > params)
    throw ValueError(kComponent, str(name, ": ", largest_layer,
                                     " parameters is more than the whole model's ", params));
}

}  // namespace zt::estimate
