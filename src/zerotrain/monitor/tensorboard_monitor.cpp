// DeepSpeed's tensorboard monitor; see tensorboard_monitor.h. Tested by
// tests/monitor/test_tfevents.cpp.
#include "zerotrain/monitor/tensorboard_monitor.h"

#include <optional>

#include "zerotrain/monitor/metrics_csv.h"

namespace zt::monitor {

TensorBoardMonitor::TensorBoardMonitor(const std::filesystem::path& dir, int64_t resumed_samples)
    : events_(dir,
              resumed_samples > 0 ? std::optional<int64_t>(resumed_samples + 1) : std::nullopt) {}

void TensorBoardMonitor::write(const StepMetrics& m, int64_t samples) {
  for (const auto& [name, value] : monitor_events(m))
    events_.add_scalar("Train/Samples/" + name, value, samples);
}

void TensorBoardMonitor::write(const EvalMetrics& m, int64_t samples) {
  for (const auto& [tag, value] : eval_monitor_events(m))
    events_.add_scalar(tag, value, samples);
}

}  // namespace zt::monitor
