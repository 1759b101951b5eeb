// The run's metrics files; see run_log.h. Tested by tests/train/test_train_outputs.cpp.
#include "zerotrain/train/run_log.h"

#include "zerotrain/train/checkpoint.h"

namespace zt::train {

RunLog::RunLog(const std::filesystem::path& out, const ReportConfig& r, bool evaluates, bool active,
               int64_t resumed_step, int64_t global_batch_rows)
    : out_(out), global_batch_rows_(global_batch_rows) {
  if (!active) return;
  const bool resuming = resumed_step > 0;
  if (resuming) {
    drop_metrics_after(jsonl_path(), resumed_step);
    monitor::drop_csv_rows_after(csv_path(), resumed_step);
    if (!r.csv_monitor_dir.empty())
      monitor::CsvMonitor::drop_after(r.csv_monitor_dir, resumed_step * global_batch_rows);
  }
  jsonl_.emplace(jsonl_path(), resuming);
  csv_.emplace(csv_path(), resuming, evaluates);
  if (!r.csv_monitor_dir.empty()) monitor_.emplace(r.csv_monitor_dir, resuming);
  if (!r.tensorboard_dir.empty())
    tensorboard_.emplace(r.tensorboard_dir, resumed_step * global_batch_rows);
  if (r.wandb.enabled) wandb_.emplace(out / "wandb", r.wandb);
}

void RunLog::write(const monitor::StepMetrics& m) {
  if (jsonl_) jsonl_->write(m);
  if (csv_) csv_->write(m);
  if (monitor_) monitor_->write(m, m.step * global_batch_rows_);
  if (tensorboard_) tensorboard_->write(m, m.step * global_batch_rows_);
  if (wandb_) wandb_->write(m, m.step * global_batch_rows_);
}

void RunLog::write(const monitor::EvalMetrics& m) {
  if (jsonl_) jsonl_->write(m);
  if (csv_) csv_->write(m);
  if (monitor_) monitor_->write(m, m.step * global_batch_rows_);
  if (tensorboard_) tensorboard_->write(m, m.step * global_batch_rows_);
  if (wandb_) wandb_->write(m, m.step * global_batch_rows_);
}

}  // namespace zt::train
