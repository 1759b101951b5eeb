// DeepSpeed's schedule formulas; see deepspeed_schedules.h. Each lr_at mirrors the Python method
// it names, operation for operation, so that the double results agree to the last bits.
// Tested by tests/optim/test_schedulers.cpp.
#include "zerotrain/optim/deepspeed_schedules.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "zerotrain/core/error.h"

namespace zt::optim {

namespace {

constexpr std::string_view kComponent = "scheduler";

void require(bool ok, std::string_view type, std::string_view key, double value,
             std::string_view want) {
  if (!ok) throw ValueError(kComponent, str(type, ": ", key, " = ", value, ": must be ", want));
}

void check_finite(std::string_view type, std::string_view key, double value) {
  require(std::isfinite(value), type, key, value, "finite");
}

// math.isclose(x, 0) with its default tolerances is x == 0.
bool is_zero(double x) {
  return x == 0.0;
}

using config::WarmupType;

constexpr double kDefaultWarmupMaxLr = 0.001;  // DeepSpeed's WarmupLR default

config::WarmupLrParams warmup_part(const config::WarmupDecayLrParams& p) {
  config::WarmupLrParams w;
  w.warmup_min_lr = p.warmup_min_lr;
  w.warmup_max_lr = p.warmup_max_lr;
  w.warmup_num_steps = p.warmup_num_steps;
  w.warmup_type = p.warmup_type;
  return w;
}

config::WarmupLrParams with_max_lr(config::WarmupLrParams p) {
  p.warmup_max_lr = p.warmup_max_lr.value_or(kDefaultWarmupMaxLr);
  return p;
}

}  // namespace

WarmupLR::WarmupLR(const config::WarmupLrParams& p)
    : p_(with_max_lr(p)), warmup_num_steps_(std::max<int64_t>(2, p.warmup_num_steps)) {
  // DeepSpeed warms up over max(2, n) steps, so 0 (a Trainer's default warmup) is accepted.
  require(p.warmup_num_steps >= 0, type(), "warmup_num_steps",
          static_cast<double>(p.warmup_num_steps), "0 or more");
  check_finite("WarmupLR", "warmup_min_lr", p_.warmup_min_lr);
  check_finite("WarmupLR", "warmup_max_lr", *p_.warmup_max_lr);
}

double WarmupLR::warmup_gamma(int64_t it) const {
  if (p_.warmup_type == WarmupType::log)
    return (1.0 / std::log(static_cast<double>(warmup_num_steps_))) *
           std::log(static_cast<double>(it + 1));
  return static_cast<double>(it) / static_cast<double>(warmup_num_steps_);
}

double WarmupLR::gamma(int64_t it) const {
  return it < warmup_num_steps_ ? warmup_gamma(it) : 1.0;
}

double WarmupLR::lr_at(int64_t it) const {
  if (it < 0) return p_.warmup_min_lr;
  return p_.warmup_min_lr + (*p_.warmup_max_lr - p_.warmup_min_lr) * gamma(it);
}

WarmupDecayLR::WarmupDecayLR(const config::WarmupDecayLrParams& p)
    : WarmupLR(warmup_part(p)), total_num_steps_(p.total_num_steps) {
  require(p.total_num_steps >= 1, type(), "total_num_steps", static_cast<double>(p.total_num_steps),
          ">= 1 (it is required)");
}

double WarmupDecayLR::gamma(int64_t it) const {
  if (it < warmup_num_steps_) return warmup_gamma(it);
  return std::max(0.0,
                  static_cast<double>(total_num_steps_ - it) /
                      std::max(1.0, static_cast<double>(total_num_steps_ - warmup_num_steps_)));
}

WarmupCosineLR::WarmupCosineLR(const config::WarmupCosineLrParams& p, double base_lr)
    : p_(p), base_lr_(base_lr), warmup_num_steps_(std::max<int64_t>(2, p.warmup_num_steps)) {
  // DeepSpeed warms up over max(2, n) steps, so 0 (a Trainer's default warmup) is accepted.
  require(p.warmup_num_steps >= 0, type(), "warmup_num_steps",
          static_cast<double>(p.warmup_num_steps), "0 or more");
  require(p.total_num_steps >= 1, type(), "total_num_steps", static_cast<double>(p.total_num_steps),
          ">= 1 (it is required)");
  check_finite("WarmupCosineLR", "warmup_min_ratio", p.warmup_min_ratio);
  check_finite("WarmupCosineLR", "cos_min_ratio", p.cos_min_ratio);
  check_finite("WarmupCosineLR", "base_lr", base_lr);
}

double WarmupCosineLR::lr_at(int64_t it) const {
  if (it < 0) return 0.0;
  double ratio;
  if (it < warmup_num_steps_) {
    ratio = p_.warmup_type == WarmupType::log
                ? (1.0 / std::log(static_cast<double>(warmup_num_steps_))) *
                      std::log(static_cast<double>(it + 1))
                : static_cast<double>(it) / static_cast<double>(warmup_num_steps_);
    ratio = p_.warmup_min_ratio + ratio * (1.0 - p_.warmup_min_ratio);
  } else {
    const auto real_last_step = static_cast<double>(it - warmup_num_steps_ + 1);
    const auto real_total_steps =
        static_cast<double>(std::max<int64_t>(1, p_.total_num_steps - warmup_num_steps_));
    const double progress = std::min(1.0, real_last_step / real_total_steps);
    ratio = (1.0 + std::cos(std::numbers::pi * progress)) / 2.0;
    ratio = std::max(0.0, p_.cos_min_ratio + (1.0 - p_.cos_min_ratio) * ratio);
  }
  return base_lr_ * ratio;
}

OneCycle::OneCycle(const config::OneCycleParams& p) : p_(p) {
  require(p.cycle_first_step_size >= 1, type(), "cycle_first_step_size",
          static_cast<double>(p.cycle_first_step_size), ">= 1");
  if (p.cycle_second_step_size)
    require(*p.cycle_second_step_size >= 1, type(), "cycle_second_step_size",
            static_cast<double>(*p.cycle_second_step_size), ">= 1 (or unset)");
  require(p.cycle_first_stair_count >= 0, type(), "cycle_first_stair_count",
          static_cast<double>(p.cycle_first_stair_count), ">= 0");
  if (p.cycle_second_stair_count)
    require(*p.cycle_second_stair_count >= 0, type(), "cycle_second_stair_count",
            static_cast<double>(*p.cycle_second_stair_count), ">= 0 (or unset)");
  require(p.decay_step_size >= 0, type(), "decay_step_size", static_cast<double>(p.decay_step_size),
          ">= 0");
  for (auto [key, v] : {std::pair{"cycle_min_lr", p.cycle_min_lr},
                        {"cycle_max_lr", p.cycle_max_lr},
                        {"decay_lr_rate", p.decay_lr_rate},
                        {"cycle_min_mom", p.cycle_min_mom},
                        {"cycle_max_mom", p.cycle_max_mom},
                        {"decay_mom_rate", p.decay_mom_rate}})
    check_finite("OneCycle", key, v);
  first_ = static_cast<double>(p.cycle_first_step_size);
  second_ = p.cycle_second_step_size ? static_cast<double>(*p.cycle_second_step_size) : first_;
  total_ = first_ + second_;
  step_ratio_ = first_ / total_;
  first_stairs_ = p.cycle_first_stair_count;
  second_stairs_ = p.cycle_second_stair_count.value_or(first_stairs_);
  skip_lr_decay_ = skip_mom_decay_ = p.decay_step_size == 0;
  if (is_zero(p.decay_lr_rate)) skip_lr_decay_ = true;
  if (is_zero(p.decay_mom_rate)) skip_mom_decay_ = true;
}

double OneCycle::scale_factor(int64_t it) const {
  const auto batch_iteration = static_cast<double>(it + 1);
  const double cycle = std::floor(1.0 + batch_iteration / total_);
  const double x = 1.0 + batch_iteration / total_ - cycle;
  double scale;
  int64_t stairs;
  if (x <= step_ratio_) {
    scale = x / step_ratio_;
    stairs = first_stairs_;
  } else {
    scale = (x - 1.0) / (step_ratio_ - 1.0);
    stairs = second_stairs_;
  }
  if (stairs > 0) {
    const double cycle_iteration = std::fmod(batch_iteration, total_);
    const auto count = static_cast<double>(stairs);
    const double position = cycle_iteration <= first_
                                ? cycle_iteration * count / first_
                                : (total_ - cycle_iteration) * count / second_;
    scale = std::floor(position) / count;
  }
  return scale;
}

double OneCycle::lr_at(int64_t it) const {
  if (it < 0) return p_.cycle_min_lr;  // the constructor's group['lr'] = cycle_min_lr
  if (static_cast<double>(it) < total_)
    return p_.cycle_min_lr + (p_.cycle_max_lr - p_.cycle_min_lr) * scale_factor(it);
  if (skip_lr_decay_) return p_.cycle_min_lr;
  const double interval = static_cast<double>(it - static_cast<int64_t>(total_) + 1) /
                          static_cast<double>(p_.decay_step_size);
  return p_.cycle_min_lr / (1.0 + p_.decay_lr_rate * interval);
}

std::optional<Betas> OneCycle::betas_at(int64_t it) const {
  if (!p_.cycle_momentum) return std::nullopt;
  if (it < 0) return Betas{p_.cycle_min_mom, 0.99};  // the constructor's group['betas']
  if (static_cast<double>(it) < total_)
    return Betas{p_.cycle_max_mom - (p_.cycle_max_mom - p_.cycle_min_mom) * scale_factor(it), 0.99};
  if (skip_mom_decay_) return Betas{p_.cycle_max_mom, 0.99};
  const double interval = static_cast<double>(it - static_cast<int64_t>(total_) + 1) /
                          static_cast<double>(p_.decay_step_size);
  return Betas{p_.cycle_max_mom * (1.0 + p_.decay_mom_rate * interval), 0.99};
}

LRRangeTest::LRRangeTest(const config::LrRangeTestParams& p) : p_(p) {
  require(p.lr_range_test_step_size >= 1, type(), "lr_range_test_step_size",
          static_cast<double>(p.lr_range_test_step_size), ">= 1");
  check_finite("LRRangeTest", "lr_range_test_min_lr", p.lr_range_test_min_lr);
  check_finite("LRRangeTest", "lr_range_test_step_rate", p.lr_range_test_step_rate);
}

double LRRangeTest::lr_at(int64_t it) const {
  const double interval =
      static_cast<double>(it + 1) / static_cast<double>(p_.lr_range_test_step_size);
  const double steps = p_.lr_range_test_staircase ? std::floor(interval) : interval;
  return p_.lr_range_test_min_lr * (1.0 + p_.lr_range_test_step_rate * steps);
}

}  // namespace zt::optim
