// DeepSpeed's learning-rate schedules (deepspeed/runtime/lr_schedules.py) with their parameter
// names, defaults (config/scheduler_config.h) and formulas, evaluated in double as Python does.
// Iterations follow [Note: scheduler iterations] in scheduler.h. Tested by
// tests/optim/test_schedulers.cpp against tools/reference/make_scheduler_reference.py.
#pragma once

#include <cstdint>
#include <string>

#include "zerotrain/config/scheduler_config.h"
#include "zerotrain/optim/scheduler.h"

namespace zt::optim {

// Each schedule takes the typed params of config/scheduler_config.h, as the ds_config parser
// reads them (the one parse of a scheduler); make_scheduler (scheduler.h) picks the class.
class WarmupLR : public Scheduler {
 public:
  // An unset warmup_max_lr is DeepSpeed's 0.001.
  explicit WarmupLR(const config::WarmupLrParams& p);
  std::string_view type() const override { return "WarmupLR"; }
  double lr_at(int64_t it) const override;

 protected:
  // DeepSpeed's _get_gamma inside the warmup; `it` < warmup_num_steps_.
  double warmup_gamma(int64_t it) const;
  virtual double gamma(int64_t it) const;

  config::WarmupLrParams p_;  // warmup_max_lr set
  int64_t warmup_num_steps_;  // max(2, warmup_num_steps)
};

class WarmupDecayLR : public WarmupLR {
 public:
  explicit WarmupDecayLR(const config::WarmupDecayLrParams& p);
  std::string_view type() const override { return "WarmupDecayLR"; }

 private:
  double gamma(int64_t it) const override;
  int64_t total_num_steps_;
};

class WarmupCosineLR : public Scheduler {
 public:
  // base_lr: the optimizer's lr, which the ratios scale.
  WarmupCosineLR(const config::WarmupCosineLrParams& p, double base_lr);
  std::string_view type() const override { return "WarmupCosineLR"; }
  double lr_at(int64_t it) const override;

 private:
  config::WarmupCosineLrParams p_;
  double base_lr_;
  int64_t warmup_num_steps_;
};

class OneCycle : public Scheduler {
 public:
  explicit OneCycle(const config::OneCycleParams& p);
  std::string_view type() const override { return "OneCycle"; }
  double lr_at(int64_t it) const override;
  std::optional<Betas> betas_at(int64_t it) const override;

 private:
  double scale_factor(int64_t it) const;
  config::OneCycleParams p_;
  double first_, second_, total_, step_ratio_;
  int64_t first_stairs_, second_stairs_;
  bool skip_lr_decay_, skip_mom_decay_;
};

class LRRangeTest : public Scheduler {
 public:
  explicit LRRangeTest(const config::LrRangeTestParams& p);
  std::string_view type() const override { return "LRRangeTest"; }
  double lr_at(int64_t it) const override;

 private:
  config::LrRangeTestParams p_;
};

}  // namespace zt::optim
