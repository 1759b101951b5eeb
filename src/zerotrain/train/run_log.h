// The metrics files of one training run, written by rank 0 at each logged step and evaluation:
// <out>/metrics.jsonl, <out>/metrics.csv (the same columns, an evaluation's as a row of its own)
// and, with csv_monitor, DeepSpeed's per-metric CSV files (metrics_csv.h), with tensorboard its
// event file (tensorboard_monitor.h) and with wandb an offline wandb run under <out>/wandb
// (wandb_monitor.h; closed with the RunLog).
// A resumed run first drops what the interrupted run logged after its checkpoint, then appends.
// Tested by tests/train/test_train_outputs.cpp, tests/monitor/test_tfevents.cpp and
// test_wandb_offline.cpp.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>

#include "zerotrain/monitor/metrics.h"
#include "zerotrain/monitor/metrics_csv.h"
#include "zerotrain/monitor/tensorboard_monitor.h"
#include "zerotrain/monitor/wandb_monitor.h"
#include "zerotrain/train/report_config.h"

namespace zt::train {

class RunLog {
 public:
  // out: the run's output directory; r: the reporting section (which monitors). evaluates: the
  // run evaluates held-out data (metrics.csv gets the eval columns). active: this rank writes
  // (rank 0); else every call does nothing. resumed_step: the checkpoint's step on --resume (0: a
  // new run, the files start empty). global_batch_rows: sequences per optimizer step over all
  // ranks (the csv_monitor's samples).
  RunLog(const std::filesystem::path& out, const ReportConfig& r, bool evaluates, bool active,
         int64_t resumed_step, int64_t global_batch_rows);

  void write(const monitor::StepMetrics& m);
  // An evaluation: its record in metrics.jsonl, its row in metrics.csv and its events in the
  // csv_monitor, tensorboard and wandb monitors.
  void write(const monitor::EvalMetrics& m);
  std::filesystem::path jsonl_path() const { return out_ / "metrics.jsonl"; }
  std::filesystem::path csv_path() const { return out_ / "metrics.csv"; }
  // The TensorBoard event file this run writes; empty without one.
  std::filesystem::path tensorboard_file() const {
    return tensorboard_ ? tensorboard_->path() : std::filesystem::path();
  }
  // The offline wandb run's directory; empty without one.
  std::filesystem::path wandb_run_dir() const {
    return wandb_ ? wandb_->run_dir() : std::filesystem::path();
  }

 private:
  std::filesystem::path out_;
  int64_t global_batch_rows_;
  std::optional<monitor::MetricsWriter> jsonl_;
  std::optional<monitor::CsvMetricsWriter> csv_;
  std::optional<monitor::CsvMonitor> monitor_;
  std::optional<monitor::TensorBoardMonitor> tensorboard_;
  std::optional<monitor::WandbMonitor> wandb_;
};

}  // namespace zt::train
