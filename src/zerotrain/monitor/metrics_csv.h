// CSV files of the training metrics: <out>/metrics.csv (the columns of metric_fields and, in a
// run that evaluates, those of eval_fields after them; a header once, a row per logged step with
// the eval columns empty and a row per evaluation with its step and eval columns and the others
// empty, so `eval_loss` is filled exactly on evaluation rows; appended to on --resume like
// metrics.jsonl, under the header already there) and DeepSpeed's csv_monitor layout (see
// [Note: csv_monitor layout]). Tested by tests/train/test_train_outputs.cpp and
// tests/monitor/test_metrics_csv_eval.cpp.
//
// [Note: csv_monitor layout]
// As deepspeed/monitor/csv_monitor.py: a directory <output_path>/<job_name>/ (output_path ""
// means the working directory) with one file per metric named after its event with '/' turned
// into '_' (Train_Samples_train_loss.csv, Train_Samples_lr.csv, with fp16
// Train_Samples_loss_scale.csv, and with wall_clock_breakdown
// Train_Samples_elapsed_time_ms_{forward,backward,backward_allreduce,step}.csv, and with an
// evaluation Eval_Samples_eval_loss.csv and Eval_Samples_eval_perplexity.csv), each with the
// header "step,<last part of the name>" and rows "<global samples>,<value>", where global samples =
// steps x the global batch, DeepSpeed's x axis. Rows are written at each logged step (the
// interval's mean loss). A file that already has rows gets no second header.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "zerotrain/monitor/metrics.h"

namespace zt::monitor {

// DeepSpeed's monitor events of a record without their "Train/Samples/" prefix, in order:
// train_loss, lr and, with wall-clock times, elapsed_time_ms_{forward,backward,
// backward_allreduce,step}. The csv_monitor and tensorboard monitors write these.
std::vector<std::pair<std::string, double>> monitor_events(const StepMetrics& m);
// An evaluation's events with their full tags (DeepSpeed logs no evaluation; these follow its
// naming): Eval/Samples/eval_loss and Eval/Samples/eval_perplexity.
std::vector<std::pair<std::string, double>> eval_monitor_events(const EvalMetrics& m);

// Rewrites a CSV file (atomically) with its header line and the rows whose first column is an
// integer <= `max_first`; drops rows cut short by a crash. No file: nothing.
void drop_csv_rows_after(const std::filesystem::path& path, int64_t max_first);

// metrics.csv. Throws zt::Error("metrics") when the file cannot be opened or written.
class CsvMetricsWriter {
 public:
  // append: keep the rows already there; the header goes into a new or empty file only, and a
  // header already there decides the columns (a value without a column is left out: metrics.jsonl
  // has every value). evaluates: the run evaluates, so the header ends with the eval columns.
  CsvMetricsWriter(const std::filesystem::path& path, bool append, bool evaluates);
  void write(const StepMetrics& m);
  // Before the first logged step the header is not known yet (its columns follow the first step's
  // record): such an evaluation is written with that step's row, just before it.
  void write(const EvalMetrics& m);
  const std::filesystem::path& path() const { return path_; }

 private:
  void write_row(int64_t step, const std::vector<std::pair<std::string, double>>& fields);

  std::filesystem::path path_;
  std::ofstream out_;
  bool evaluates_;
  std::vector<std::string> columns_;  // the header's; empty until there is one
  std::vector<EvalMetrics> pending_;  // evaluations waiting for the header
};

// The csv_monitor files of [Note: csv_monitor layout] under `dir` (created).
class CsvMonitor {
 public:
  // append: keep the files' rows (a resumed run; drop_after trims them first).
  CsvMonitor(const std::filesystem::path& dir, bool append);
  // Removes the rows after `samples` from every file of the layout in `dir`.
  static void drop_after(const std::filesystem::path& dir, int64_t samples);
  void write(const StepMetrics& m, int64_t samples);
  void write(const EvalMetrics& m, int64_t samples);
  const std::filesystem::path& dir() const { return dir_; }

 private:
  // tag: the event's full name, "Train/Samples/lr".
  void write_one(const std::string& tag, int64_t samples, double value);

  std::filesystem::path dir_;
  std::map<std::string, bool> started_;  // files this writer created or found non-empty
};

}  // namespace zt::monitor
