// validate_report_config (report_config.h).
#include "zerotrain/train/report_config.h"

#include "zerotrain/core/error.h"

namespace zt::train {

void validate_report_config(const ReportConfig& r) {
  if (r.log_every <= 0)
    throw ValueError("config",
                     str("steps_per_print (--log-every): must be > 0, got ", r.log_every));
  if (r.plot_every < 0)
    throw ValueError("config", str("--plot-every: must be >= 0, got ", r.plot_every));
  if (r.save_every < 0)
    throw ValueError("config", str("--save-every: must be >= 0, got ", r.save_every));
  if (r.keep_checkpoints < 1)
    throw ValueError("config", str("--keep-checkpoints: must be >= 1, got ", r.keep_checkpoints));
}

}  // namespace zt::train
