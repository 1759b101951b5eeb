// DeepSpeed's tensorboard monitor (deepspeed/monitor/tensorboard.py): a SummaryWriter on
// <output_path>/<job_name>/ to which each logged step adds the scalars of monitor_events
// (metrics_csv.h) as "Train/Samples/<name>" at step = global samples (steps x the global batch),
// the csv_monitor's x axis. A resumed run opens a new event file that purges the steps after its
// checkpoint ([Note: tfevents format]). Tested by tests/monitor/test_tfevents.cpp.
#pragma once

#include <cstdint>
#include <filesystem>

#include "zerotrain/monitor/metrics.h"
#include "zerotrain/monitor/tfevents_writer.h"

namespace zt::monitor {

class TensorBoardMonitor {
 public:
  // resumed_samples: the checkpoint's global samples on a resumed run, 0 for a new one.
  TensorBoardMonitor(const std::filesystem::path& dir, int64_t resumed_samples);
  void write(const StepMetrics& m, int64_t samples);
  // The scalars of eval_monitor_events (metrics_csv.h).
  void write(const EvalMetrics& m, int64_t samples);
  const std::filesystem::path& path() const { return events_.path(); }

 private:
  TfEventsWriter events_;
};

}  // namespace zt::monitor
