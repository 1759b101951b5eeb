// DeepSpeed's learning-rate schedules (deepspeed/runtime/lr_schedules.py) with their parameter
// names, defaults and formulas, evaluated in double as Python does. Iterations follow
// [Note: scheduler iterations] in scheduler.h. Tested by tests/optim/test_schedulers.cpp against
// tools/reference/make_scheduler_reference.py.
#pragma once

#include <cstdint>
#include <string>

#include "zerotrain/optim/scheduler.h"

namespace zt::optim {

enum class WarmupType { log, linear };

struct WarmupLRParams {
  double warmup_min_lr = 0.0;
  double warmup_max_lr = 0.001;
  int64_t warmup_num_steps = 1000;  // DeepSpeed raises it to at least 2
  WarmupType warmup_type = WarmupType::log;
};

struct WarmupDecayLRParams {
  int64_t total_num_steps = 0;  // required
  double warmup_min_lr = 0.0;
  double warmup_max_lr = 0.001;
  int64_t warmup_num_steps = 1000;
  WarmupType warmup_type = WarmupType::log;
};

struct WarmupCosineLRParams {
  int64_t total_num_steps = 0;  // required
  double warmup_min_ratio = 0.0;
  int64_t warmup_num_steps = 1000;
  double cos_min_ratio = 0.0001;
  WarmupType warmup_type = WarmupType::log;
  double base_lr = 0.001;  // the optimizer's lr, which the ratios scale
};

struct OneCycleParams {
  double cycle_min_lr = 0.0;  // required
  double cycle_max_lr = 0.0;  // required
  double decay_lr_rate = 0.0;
  int64_t cycle_first_step_size = 2000;
  int64_t cycle_second_step_size = -1;  // -1: DeepSpeed's None, = cycle_first_step_size
  int64_t cycle_first_stair_count = 0;
  int64_t cycle_second_stair_count = -1;  // -1: None, = cycle_first_stair_count
  int64_t decay_step_size = 0;
  bool cycle_momentum = true;
  double cycle_min_mom = 0.8;
  double cycle_max_mom = 0.9;
  double decay_mom_rate = 0.0;
};

struct LRRangeTestParams {
  double lr_range_test_min_lr = 0.001;
  int64_t lr_range_test_step_size = 2000;
  double lr_range_test_step_rate = 1.0;
  bool lr_range_test_staircase = false;
};

class WarmupLR : public Scheduler {
 public:
  explicit WarmupLR(const WarmupLRParams& p);
  std::string_view type() const override { return "WarmupLR"; }
  double lr_at(int64_t it) const override;

 protected:
  // DeepSpeed's _get_gamma inside the warmup; `it` < warmup_num_steps_.
  double warmup_gamma(int64_t it) const;
  virtual double gamma(int64_t it) const;

  WarmupLRParams p_;
  int64_t warmup_num_steps_;  // max(2, warmup_num_steps)
};

class WarmupDecayLR : public WarmupLR {
 public:
  explicit WarmupDecayLR(const WarmupDecayLRParams& p);
  std::string_view type() const override { return "WarmupDecayLR"; }

 private:
  double gamma(int64_t it) const override;
  int64_t total_num_steps_;
};

class WarmupCosineLR : public Scheduler {
 public:
  explicit WarmupCosineLR(const WarmupCosineLRParams& p);
  std::string_view type() const override { return "WarmupCosineLR"; }
  double lr_at(int64_t it) const override;

 private:
  WarmupCosineLRParams p_;
  int64_t warmup_num_steps_;
};

class OneCycle : public Scheduler {
 public:
  explicit OneCycle(const OneCycleParams& p);
  std::string_view type() const override { return "OneCycle"; }
  double lr_at(int64_t it) const override;
  std::optional<Betas> betas_at(int64_t it) const override;

 private:
  double scale_factor(int64_t it) const;
  OneCycleParams p_;
  double first_, second_, total_, step_ratio_;
  int64_t first_stairs_, second_stairs_;
  bool skip_lr_decay_, skip_mom_decay_;
};

class LRRangeTest : public Scheduler {
 public:
  explicit LRRangeTest(const LRRangeTestParams& p);
  std::string_view type() const override { return "LRRangeTest"; }
  double lr_at(int64_t it) const override;

 private:
  LRRangeTestParams p_;
};

}  // namespace zt::optim
