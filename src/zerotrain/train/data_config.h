// The data section of the run configuration: the shape of every batch, the seed of the init and
// the data order, and how examples fill rows (--seq-len, --micro-batch, --grad-accum, --seed,
// --packing; a ds_config's train_micro_batch_size_per_gpu and gradient_accumulation_steps). Tested
// by tests/train/test_run_config.cpp.
#pragma once

#include <cstdint>

namespace zt::train {

struct DataConfig {
  int64_t seq_len = 128;
  int64_t micro_batch = 8;
  int64_t grad_accum = 1;
  uint64_t seed = 1234;
  // --packing on|off: examples packed into rows with their boundaries marked (on), or one example
  // per row, padded (off; needs a version 2 token file). See data/data_loader.h.
  bool packing = true;
};

// The most tokens one step of one rank may hold (micro_batch x grad_accum x seq_len).
inline constexpr int64_t kMaxStepTokens = int64_t{1} << 48;

// The one check of these values: each size > 0, and a step's tokens at most kMaxStepTokens.
// Throws ValueError "[config] <ds_config key> (--<flag>): must be > 0, got <value>".
void validate_data_config(const DataConfig& d);

}  // namespace zt::train
