// DeepSpeed's batch-size rule (DeepSpeedConfig._set_batch_related_parameters and
// _batch_assertion): train_batch_size = train_micro_batch_size_per_gpu *
// gradient_accumulation_steps * world_size. Any two given determine the third (by integer
// division, as DeepSpeed); train_batch_size alone gives gas 1 and micro = train / world;
// micro alone gives gas 1 and train = micro * world; gradient_accumulation_steps alone, or none,
// is an error. The result must be positive and satisfy the equation exactly; the error shows the
// arithmetic. Tested by tests/config/test_batch_rule.cpp.
#pragma once

#include <cstdint>
#include <optional>

namespace zt::config {

struct BatchTriple {
  int64_t train_batch_size = 0;
  int64_t micro_batch_per_gpu = 0;
  int64_t gradient_accumulation_steps = 0;
};

BatchTriple resolve_batch_triple(std::optional<int64_t> train_batch_size,
                                 std::optional<int64_t> micro_batch_per_gpu,
                                 std::optional<int64_t> gradient_accumulation_steps,
                                 int64_t world_size);

}  // namespace zt::config
