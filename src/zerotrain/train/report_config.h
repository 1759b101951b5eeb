// The reporting section of the run configuration: how often a run logs, plots and saves, and the
// monitors it writes besides metrics.jsonl (--log-every, --plot-every, --save-every,
// --wall-clock-breakdown, --tensorboard; a ds_config's steps_per_print, wall_clock_breakdown,
// csv_monitor, tensorboard and wandb). RunLog (run_log.h) takes it. Tested by
// tests/train/test_run_config.cpp and tests/train/test_train_outputs.cpp.
#pragma once

#include <cstdint>
#include <filesystem>

#include "zerotrain/config/ds_config.h"

namespace zt::train {

struct ReportConfig {
  int64_t log_every = 10;
  int64_t plot_every = 0;  // also write loss.png every N steps (0: at the end only)
  int64_t save_every = 0;  // also write a checkpoint every N steps (0: at the end only)
  int keep_checkpoints = 2;  // the newest K complete checkpoints are kept (train/checkpoint.h)
  // Writing, fsync and the markers of a save run in the background while training goes on
  // ([Note: checkpoint save protocol] in checkpoint/checkpoint_saver.h).
  bool async_save = true;
  // Every checkpoint also holds the model's Hugging Face weights in the training dtype, gathered
  // one group at a time (checkpoint/gathered_weights.h; --checkpoint-weights, a ds_config's
  // zero_optimization.stage3_gather_16bit_weights_on_model_save).
  bool checkpoint_weights = false;
  // Per-phase milliseconds (forward, backward, comm, step) in the metrics; synchronizes the device
  // at each phase boundary (wall_clock.h).
  bool wall_clock_breakdown = false;
  // DeepSpeed's csv_monitor: also write its per-metric CSV files here (metrics_csv.h); empty: off.
  std::filesystem::path csv_monitor_dir;
  // DeepSpeed's tensorboard monitor: also write a TensorBoard event file in this directory
  // (tensorboard_monitor.h); empty: off.
  std::filesystem::path tensorboard_dir;
  // DeepSpeed's wandb monitor: with `enabled`, an offline wandb run under <out>/wandb
  // (wandb_monitor.h) with the section's project, group and team.
  config::WandbConfig wandb;
};

// The one check of these values: log_every > 0, plot_every and save_every >= 0,
// keep_checkpoints >= 1. Throws ValueError
// "[config] <ds_config key> (--<flag>): ...".
void validate_report_config(const ReportConfig& r);

}  // namespace zt::train
