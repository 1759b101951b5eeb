// The command-line values a ds_config's "auto" entries are resolved from, as the Hugging Face
// Trainer resolves them from TrainingArguments. Tested by tests/config/test_resolve_auto.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace zt::config {

// One command-line value. `value` fills an "auto"; `given` marks a flag the user typed, which
// also fills a key the file leaves out and must agree with a value the file sets.
template <typename T>
struct CliValue {
  std::optional<T> value;
  bool given = false;

  static CliValue explicit_value(T v) { return {std::move(v), true}; }
  static CliValue default_value(T v) { return {std::move(v), false}; }
};

struct ConfigOverrides {
  int64_t world_size = 1;              // data-parallel ranks
  std::optional<int64_t> hidden_size;  // the model's hidden size (ZeRO bucket sizes)
  CliValue<int64_t> micro_batch;       // --micro-batch
  CliValue<int64_t> grad_accum;        // --grad-accum
  CliValue<int64_t> total_steps;       // --steps
  CliValue<int64_t> warmup_steps;      // --warmup
  CliValue<double> lr;                 // --lr
  CliValue<double> beta1, beta2;       // --beta1, --beta2
  CliValue<double> eps;                // --eps
  CliValue<double> weight_decay;       // --weight-decay
  CliValue<double> clip;               // --clip
  CliValue<std::string> dtype;         // --dtype: "f32", "bf16" or "fp16"
};

}  // namespace zt::config
