// DeepSpeed's static and dynamic loss scalers; see loss_scaler.h. Tested by
// tests/train/test_loss_scaler.cpp.
#include "zerotrain/train/loss_scaler.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "zerotrain/core/error.h"
#include "zerotrain/core/json_util.h"

namespace zt::train {

namespace {

constexpr const char* kComponent = "loss_scaler";
constexpr double kScaleFactor = 2.0;  // DeepSpeed's fixed scale_factor

const nlohmann::json& entry(const nlohmann::json& state, const char* key) {
  if (!state.is_object() || !state.contains(key))
    throw ValueError(kComponent, str("state has no \"", key, "\": ", describe_json(state)));
  return state[key];
}

int64_t int_entry(const nlohmann::json& state, const char* key) {
  const nlohmann::json& v = entry(state, key);
  if (!v.is_number_integer())
    throw ValueError(kComponent,
                     str("state \"", key, "\" must be an integer, got ", describe_json(v)));
  return v.get<int64_t>();
}

}  // namespace

LossScaler::LossScaler(const LossScalerOptions& o) : options_(o) {
  if (!(o.loss_scale >= 0) || !std::isfinite(o.loss_scale))
    throw ValueError(kComponent, str("loss_scale must be finite and >= 0, got ", o.loss_scale));
  dynamic_ = o.loss_scale == 0;
  if (!dynamic_) {
    cur_scale_ = o.loss_scale;
    return;
  }
  if (o.initial_scale_power < 0 || o.initial_scale_power > 127)
    throw ValueError(kComponent,
                     str("initial_scale_power must be in [0, 127], got ", o.initial_scale_power));
  if (o.loss_scale_window < 1)
    throw ValueError(kComponent, str("loss_scale_window must be >= 1, got ", o.loss_scale_window));
  if (o.hysteresis < 1)
    throw ValueError(kComponent, str("hysteresis must be >= 1, got ", o.hysteresis));
  if (!(o.min_loss_scale > 0) || !std::isfinite(o.min_loss_scale))
    throw ValueError(kComponent,
                     str("min_loss_scale must be finite and > 0, got ", o.min_loss_scale));
  cur_scale_ = std::ldexp(1.0, static_cast<int>(o.initial_scale_power));
  cur_hysteresis_ = o.hysteresis;
}

void LossScaler::update(bool overflow) {
  if (!dynamic_) return;
  if (overflow) {
    if (options_.hysteresis == 1 || cur_hysteresis_ == 1) {
      if (cur_scale_ == options_.min_loss_scale && options_.raise_error_at_min_scale)
        throw Error(kComponent, str("gradient overflow at the minimum loss scale ", cur_scale_,
                                    " (min_loss_scale): the scale cannot drop further"));
      cur_scale_ = std::max(cur_scale_ / kScaleFactor, options_.min_loss_scale);
    } else {
      --cur_hysteresis_;
    }
    last_overflow_iter_ = cur_iter_;
  } else {
    if (options_.consecutive_hysteresis) cur_hysteresis_ = options_.hysteresis;
    const int64_t stable = cur_iter_ - last_overflow_iter_ - 1;
    if (stable > 0 && stable % options_.loss_scale_window == 0) {
      if (!options_.consecutive_hysteresis) cur_hysteresis_ = options_.hysteresis;
      cur_scale_ *= kScaleFactor;
    }
  }
  ++cur_iter_;
}

nlohmann::json LossScaler::state() const {
  nlohmann::json j;
  j["dynamic"] = dynamic_;
  j["cur_scale"] = cur_scale_;
  if (dynamic_) {
    j["cur_iter"] = cur_iter_;
    j["last_overflow_iter"] = last_overflow_iter_;
    j["cur_hysteresis"] = cur_hysteresis_;
  }
  return j;
}

void LossScaler::load_state(const nlohmann::json& state) {
  const nlohmann::json& dynamic = entry(state, "dynamic");
  if (!dynamic.is_boolean())
    throw ValueError(kComponent,
                     str("state \"dynamic\" must be a boolean, got ", describe_json(dynamic)));
  if (dynamic.get<bool>() != dynamic_)
    throw ValueError(kComponent,
                     str("the saved loss scaler is ", dynamic.get<bool>() ? "dynamic" : "static",
                         " but this run's is ", dynamic_ ? "dynamic" : "static",
                         " (fp16.loss_scale ", options_.loss_scale, ")"));
  if (!dynamic_) return;  // a static scale is the configured one
  const nlohmann::json& scale = entry(state, "cur_scale");
  if (!scale.is_number() || !(scale.get<double>() > 0) || !std::isfinite(scale.get<double>()))
    throw ValueError(kComponent,
                     str("state \"cur_scale\" must be a number > 0, got ", describe_json(scale)));
  const int64_t iter = int_entry(state, "cur_iter");
  const int64_t last = int_entry(state, "last_overflow_iter");
  const int64_t hysteresis = int_entry(state, "cur_hysteresis");
  if (iter < 0 || last < -1 || last >= iter || hysteresis < 1)
    throw ValueError(kComponent, str("inconsistent state: cur_iter ", iter, ", last_overflow_iter ",
                                     last, ", cur_hysteresis ", hysteresis));
  cur_scale_ = scale.get<double>();
  cur_iter_ = iter;
  last_overflow_iter_ = last;
  cur_hysteresis_ = hysteresis;
}

}  // namespace zt::train
