// What `zerotrain train` prints on rank 0: the header line, the eval-data line and each
// evaluation, the per-log line under the progress bar (live loss and tokens/s on a terminal), the
// memory and start-up lines, and at the end the summary table or, after a stop on a signal, one
// stop line. --eval-only has its own header and result line. Tested by the CLI ctests of
// tests/cli/eval_cli.cmake and tests/cli/hostile_inputs.cmake (tests/CMakeLists.txt).
#pragma once

#include <filesystem>

#include "zerotrain/cli/progress.h"
#include "zerotrain/train/trainer.h"

namespace zt::cli {

// --eval-only: the header (before any refusal on stderr), the callbacks that print the eval-data
// line and the evaluation, and the closing "evaluated" line.
void print_eval_only_header(const train::TrainConfig& config, int world_size);
train::TrainCallbacks eval_only_callbacks(const train::TrainConfig& config);
void print_eval_only_result(const train::TrainSummary& summary);

// "zerotrain train: <model> on <device>, <dtypes>, <optimizer>, N steps x B x T tokens".
void print_train_header(const train::TrainConfig& config, int world_size);

// The progress bar over config.steps and the callbacks that print beside it; both hold `this`,
// so the console outlives the train() it reports on.
class TrainConsole {
 public:
  explicit TrainConsole(const train::TrainConfig& config);
  TrainConsole(const TrainConsole&) = delete;
  TrainConsole& operator=(const TrainConsole&) = delete;

  train::TrainCallbacks callbacks();
  // Ends the bar's line on a terminal (off one, the log lines were the progress).
  void end_progress();

 private:
  const train::TrainConfig& config_;
  ProgressBar bar_;
  double last_tokens_per_s_ = 0;  // of the last log line: the bar shows it with the loss
};

// A run stopped by SIGTERM/SIGINT ([Note: stop on a signal] in train/stop_signal.h): one line
// naming the checkpoint and how to continue from `out`.
void print_stop_line(const train::TrainSummary& summary, const std::filesystem::path& out);

// The summary table. Tokens and rates are per rank when there are several (TrainSummary).
void print_summary(const train::TrainSummary& summary, int world_size);

}  // namespace zt::cli
