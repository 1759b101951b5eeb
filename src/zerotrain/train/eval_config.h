// The evaluation section of the run configuration: the held-out token file, how often and how much
// of it a run evaluates, and whether it only evaluates (--eval-data, --eval-every, --eval-batches,
// --eval-only; a ds_config has no evaluation keys). The Evaluator (evaluation.h) takes it. Tested
// by tests/train/test_evaluation.cpp.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>

namespace zt::train {

struct EvalConfig {
  std::filesystem::path data;  // a token file from `zerotrain data prepare`; empty: no evaluation
  std::optional<int64_t>
      every;  // evaluate after every N optimizer steps; unset: after the last only
  // Evaluate the first K micro-batches of the file (K x micro_batch sequences, the same set at
  // every world size); unset: every sequence of the file.
  std::optional<int64_t> batches;
  // Evaluate the model (or the resumed checkpoint) once and return: no step, no checkpoint.
  bool only = false;

  bool enabled() const { return !data.empty(); }
};

// The one check of these values: --eval-every and --eval-batches > 0 when given, and neither
// they nor --eval-only without --eval-data. Throws ValueError "[config] --eval-every: ...".
void validate_eval_config(const EvalConfig& e);

}  // namespace zt::train
