// The schedule section of the run configuration: the learning rate over the steps, either the
// Hugging Face schedule of --lr, --warmup, --schedule and --min-lr-ratio or a ds_config's
// scheduler block (train_scheduler.h). Tested by tests/train/test_run_config.cpp and
// tests/train/test_train_outputs.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "zerotrain/config/scheduler_config.h"

namespace zt::train {

struct ScheduleConfig {
  double lr = 3e-4;  // the peak learning rate (optimizer.params.lr)
  int64_t warmup_steps = 0;
  std::string decay = "cosine";  // constant | linear | cosine
  double min_lr_ratio = 0.1;     // cosine floor
  // A ds_config's scheduler section (--deepspeed; train_scheduler.h), as parsed once, WarmupLR's
  // warmup_max_lr set; it replaces decay / warmup_steps / min_lr_ratio. Unset: those.
  std::optional<config::SchedulerConfig> deepspeed;
};

// The one check of these values: lr >= 0, warmup_steps >= 0, decay one of the three. Throws
// ValueError "[config] <ds_config key> (--<flag>): ...".
void validate_schedule_config(const ScheduleConfig& s);

}  // namespace zt::train
