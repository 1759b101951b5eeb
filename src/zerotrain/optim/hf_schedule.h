// Learning-rate schedules: linear warmup, then constant, linear or cosine decay, with the exact
// formulas of Hugging Face transformers' get_constant_schedule_with_warmup,
// get_linear_schedule_with_warmup, get_cosine_schedule_with_warmup and
// get_cosine_with_min_lr_schedule_with_warmup (LambdaLR multipliers of the base lr).
// Tested by tests/optim/test_hf_schedule.cpp and, behind the Scheduler interface (scheduler.h),
// tests/optim/test_schedulers.cpp.
//
// [Note: schedule step numbering]
// `step` is the number of optimizer steps already taken (0 for the first update), as LambdaLR sees
// it: the Trainer's first update runs at lr_at(0), which is 0 whenever there is a warmup. Past
// `total_steps` the formulas are HF's unchanged: linear stays at 0, cosine climbs back up along the
// cosine (HF does not clamp its progress), constant stays at 1.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "zerotrain/optim/scheduler.h"

namespace zt::optim {

enum class ScheduleKind { constant, linear, cosine };

std::string_view schedule_name(ScheduleKind k);  // "constant", "linear", "cosine"
// Accepts HF's lr_scheduler_type names: "constant", "constant_with_warmup", "linear", "cosine",
// "cosine_with_min_lr". Throws ValueError naming the bad value.
ScheduleKind parse_schedule_kind(std::string_view name);

struct LrScheduleConfig {
  ScheduleKind kind = ScheduleKind::linear;
  double base_lr = 1e-3;
  int64_t warmup_steps = 0;
  int64_t total_steps = 0;    // the Trainer's num_training_steps (unused by constant)
  double min_lr_ratio = 0.0;  // cosine only: the floor, as a fraction of base_lr (HF min_lr_rate)
  double num_cycles = 0.5;    // cosine only: 0.5 = one half-wave from base_lr down to the floor
};

class LrSchedule {
 public:
  // Throws ValueError naming the field for a negative lr, step count or ratio, or min_lr_ratio > 1.
  explicit LrSchedule(const LrScheduleConfig& config);

  // The multiplier of base_lr for the update after `step` completed steps (see the note above).
  double factor(int64_t step) const;
  double lr_at(int64_t step) const { return config_.base_lr * factor(step); }
  const LrScheduleConfig& config() const { return config_; }

 private:
  LrScheduleConfig config_;
};

// An LrSchedule behind the Scheduler interface: lr_at(it) = lr_at(it + 1) of the schedule (see
// [Note: scheduler iterations]); type() is the kind's name.
class HfScheduler : public Scheduler {
 public:
  explicit HfScheduler(const LrScheduleConfig& config) : schedule_(config) {}
  std::string_view type() const override { return schedule_name(schedule_.config().kind); }
  double lr_at(int64_t it) const override { return schedule_.lr_at(it + 1); }
  const LrSchedule& schedule() const { return schedule_; }

 private:
  LrSchedule schedule_;
};

}  // namespace zt::optim
