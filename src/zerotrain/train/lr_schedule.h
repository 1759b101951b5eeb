// The trainer's learning-rate schedules: Hugging Face's constant / linear / cosine with warmup,
// which now live in optim/hf_schedule.h (beside DeepSpeed's schedules and the Scheduler interface
// of optim/scheduler.h); these names keep train/'s users compiling.
// Tested by tests/train/test_lr_schedule.cpp.
#pragma once

#include "zerotrain/optim/hf_schedule.h"

namespace zt::train {

using optim::LrSchedule;
using optim::LrScheduleConfig;
using optim::parse_schedule_kind;
using optim::schedule_name;
using optim::ScheduleKind;

}  // namespace zt::train
