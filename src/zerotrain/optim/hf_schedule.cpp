// HF LR schedule formulas; see hf_schedule.h. Tested by tests/optim/test_hf_schedule.cpp.
#include "zerotrain/optim/hf_schedule.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "zerotrain/core/error.h"

namespace zt::optim {

namespace {
constexpr std::string_view kComponent = "lr_schedule";
}  // namespace

std::string_view schedule_name(ScheduleKind k) {
  switch (k) {
    case ScheduleKind::constant:
      return "constant";
    case ScheduleKind::linear:
      return "linear";
    case ScheduleKind::cosine:
      return "cosine";
  }
  return "?";
}

ScheduleKind parse_schedule_kind(std::string_view name) {
  if (name == "constant" || name == "constant_with_warmup") return ScheduleKind::constant;
  if (name == "linear") return ScheduleKind::linear;
  if (name == "cosine" || name == "cosine_with_min_lr") return ScheduleKind::cosine;
  throw ValueError(kComponent, str("unknown schedule \"", name,
                                   "\": expected constant, constant_with_warmup, linear, cosine "
                                   "or cosine_with_min_lr"));
}

LrSchedule::LrSchedule(const LrScheduleConfig& config) : config_(config) {
  if (!(config.base_lr >= 0) || !std::isfinite(config.base_lr))
    throw ValueError(kComponent, str("base_lr = ", config.base_lr, ": must be finite and >= 0"));
  if (config.warmup_steps < 0)
    throw ValueError(kComponent, str("warmup_steps = ", config.warmup_steps, ": must be >= 0"));
  if (config.total_steps < 0)
    throw ValueError(kComponent, str("total_steps = ", config.total_steps, ": must be >= 0"));
  if (!(config.min_lr_ratio >= 0 && config.min_lr_ratio <= 1))
    throw ValueError(kComponent,
                     str("min_lr_ratio = ", config.min_lr_ratio, ": must be in [0, 1]"));
  if (!(config.num_cycles >= 0) || !std::isfinite(config.num_cycles))
    throw ValueError(kComponent,
                     str("num_cycles = ", config.num_cycles, ": must be finite and >= 0"));
}

double LrSchedule::factor(int64_t step) const {
  if (step < 0) throw ValueError(kComponent, str("step = ", step, ": must be >= 0"));
  const auto s = static_cast<double>(step);
  const int64_t warmup = config_.warmup_steps;
  if (step < warmup) return s / static_cast<double>(std::max<int64_t>(1, warmup));
  const auto decay_steps = static_cast<double>(std::max<int64_t>(1, config_.total_steps - warmup));
  const double progress = (s - static_cast<double>(warmup)) / decay_steps;
  switch (config_.kind) {
    case ScheduleKind::constant:
      return 1.0;
    case ScheduleKind::linear:
      return std::max(0.0, static_cast<double>(config_.total_steps - step) / decay_steps);
    case ScheduleKind::cosine: {
      const double wave =
          0.5 * (1.0 + std::cos(std::numbers::pi * config_.num_cycles * 2.0 * progress));
      return std::max(0.0, wave * (1.0 - config_.min_lr_ratio) + config_.min_lr_ratio);
    }
  }
  return 1.0;
}

}  // namespace zt::optim
