// validate_schedule_config (schedule_config.h).
#include "zerotrain/train/schedule_config.h"

#include "zerotrain/core/error.h"

namespace zt::train {

void validate_schedule_config(const ScheduleConfig& s) {
  if (!(s.lr >= 0))
    throw ValueError("config", str("optimizer.params.lr (--lr): must be >= 0, got ", s.lr));
  if (s.warmup_steps < 0)
    throw ValueError("config", str("scheduler.params.warmup_num_steps (--warmup): must be >= 0, "
                                   "got ",
                                   s.warmup_steps));
  if (s.decay != "constant" && s.decay != "linear" && s.decay != "cosine")
    throw ValueError("config",
                     str("--schedule: must be constant, linear or cosine, got ", s.decay));
}

}  // namespace zt::train
