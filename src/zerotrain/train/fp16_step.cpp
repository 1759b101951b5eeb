// The step plan under a loss scale; see fp16_step.h. Tested by tests/train/test_fp16_step.cpp.
#include "zerotrain/train/fp16_step.h"

#include <cmath>
#include <limits>

#include "zerotrain/train/grad_clip.h"

namespace zt::train {

StepPlan plan_step(double scaled_norm, double clip, std::optional<LossScaler>& scaler,
                   bool check_overflow) {
  StepPlan p;
  p.loss_scale = scaler ? scaler->scale() : 1.0;
  p.overflow = !std::isfinite(scaled_norm);
  p.norm = scaled_norm / p.loss_scale;
  if (scaler) scaler->update(p.overflow);
  p.update = !p.overflow;
  p.step_scheduler = !(p.overflow && (scaler || check_overflow));
  if (p.update) p.grad_scale = static_cast<float>(clip_coefficient(p.norm, clip) / p.loss_scale);
  return p;
}

std::optional<LossScaler> make_loss_scaler(const TrainConfig& c) {
  if (c.precision.dtype != DType::f16) return std::nullopt;
  return LossScaler(c.precision.loss_scaler);
}

float micro_loss_scale(double scale, bool inject) {
  if (inject) return std::numeric_limits<float>::infinity();
  return static_cast<float>(scale);
}

}  // namespace zt::train
