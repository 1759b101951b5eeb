// DeepSpeed's wandb monitor (deepspeed/monitor/wandb.py: wandb.init(project, group, entity=team)
// and wandb.log({tag: value}, step=global samples)) run the way `wandb offline` runs it: no
// service is contacted, the run is a local directory that `wandb sync DIR` uploads later. See
// [Note: wandb offline run]. Tested by tests/monitor/test_wandb_offline.cpp and, with wandb's own
// reader, tools/parity/check_wandb.py.
//
// [Note: wandb offline run]
// <out>/wandb/offline-run-<YYYYmmdd_HHMMSS>-<id>/ with run-<id>.wandb (wandb_datastore.h), an
// empty files/ and <out>/wandb/latest-run linking to it; <id> is 8 random characters of [a-z0-9]
// as wandb's generate_id. The log holds wandb_internal.Record messages, numbered from 1 (num, 1),
// with _info.stream_id (200.1) = <id> on the header and run records: a HeaderRecord (21), a
// RunRecord (17: run_id 1, entity 2 = team, project 3, config 4 = {_wandb: {}}, run_group 6 =
// group, host 13, start_time 17), then per logged step a HistoryRecord (2: items {key 1,
// value_json 16} for each Train/Samples/<name> of monitor_events plus _step, _runtime and
// _timestamp, step 2 = {num 1: _step}) followed by a SummaryRecord (3) of the same items (an
// evaluation adds the same pair for its Eval/Samples/eval_loss and eval_perplexity); on
// close a RunExitRecord (18: exit_code 1, runtime 2 in whole seconds) and a FinalRecord (20), which
// wandb sync needs before it sends the exit. _step is the global sample count, DeepSpeed's step.
// Values are written with 9 significant digits as metrics.jsonl; NaN as wandb writes it ("NaN").
// A resumed zerotrain run starts a new wandb run whose history begins after its checkpoint.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "zerotrain/config/ds_config.h"
#include "zerotrain/monitor/metrics.h"
#include "zerotrain/monitor/wandb_datastore.h"

namespace zt::monitor {

class WandbMonitor {
 public:
  // Creates a new run directory under `wandb_dir` (<out>/wandb) and writes the header and run
  // records. Throws zt::Error("wandb") when it cannot.
  WandbMonitor(const std::filesystem::path& wandb_dir, const config::WandbConfig& settings);
  // Writes the exit record (exit code 1 while an exception unwinds) and the final record.
  ~WandbMonitor();
  WandbMonitor(const WandbMonitor&) = delete;
  WandbMonitor& operator=(const WandbMonitor&) = delete;

  void write(const StepMetrics& m, int64_t samples);
  // An evaluation: a history record of eval_monitor_events (metrics_csv.h) at `samples`, after
  // the step's own record when both fall on one step.
  void write(const EvalMetrics& m, int64_t samples);
  const std::string& run_id() const { return id_; }
  const std::filesystem::path& run_dir() const { return run_dir_; }
  const std::filesystem::path& log_path() const { return log_.path(); }

 private:
  static std::filesystem::path make_run_dir(const std::filesystem::path& wandb_dir,
                                            const std::string& id);
  void write_record(int field, const std::string& message, bool with_info);
  // A HistoryRecord of `events` (full tags) at `samples`, then the SummaryRecord of the same items.
  void write_history(const std::vector<std::pair<std::string, double>>& events, int64_t samples);

  std::string id_;
  std::filesystem::path run_dir_;
  WandbDataStore log_;
  double start_ = 0;  // unix seconds
  int64_t num_ = 0;   // the last record number
  int exceptions_at_start_ = 0;
};

}  // namespace zt::monitor
