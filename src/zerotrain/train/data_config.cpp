// validate_data_config (data_config.h).
#include "zerotrain/train/data_config.h"

#include "zerotrain/core/checked_math.h"
#include "zerotrain/core/error.h"

namespace zt::train {

void validate_data_config(const DataConfig& d) {
  auto positive = [](const char* name, int64_t v) {
    if (v <= 0) throw ValueError("config", str(name, ": must be > 0, got ", v));
  };
  positive("--seq-len", d.seq_len);
  positive("train_micro_batch_size_per_gpu (--micro-batch)", d.micro_batch);
  positive("gradient_accumulation_steps (--grad-accum)", d.grad_accum);
  // A step's tokens per rank stay far inside 64 bits (the throughput and the metrics multiply
  // them by the world size); 2^48 is past any real batch and refuses a run that would never end.
  const std::optional<int64_t> tokens = checked_product({d.micro_batch, d.grad_accum, d.seq_len});
  if (!tokens || *tokens > kMaxStepTokens)
    throw ValueError("config", str("--micro-batch x --grad-accum x --seq-len: ", d.micro_batch,
                                   " x ", d.grad_accum, " x ", d.seq_len,
                                   " tokens per step is above the ceiling of 2^48"));
}

}  // namespace zt::train
