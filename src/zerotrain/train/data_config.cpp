// validate_data_config (data_config.h).
#include "zerotrain/train/data_config.h"

#include "zerotrain/core/error.h"

namespace zt::train {

void validate_data_config(const DataConfig& d) {
  auto positive = [](const char* name, int64_t v) {
    if (v <= 0) throw ValueError("config", str(name, ": must be > 0, got ", v));
  };
  positive("--seq-len", d.seq_len);
  positive("train_micro_batch_size_per_gpu (--micro-batch)", d.micro_batch);
  positive("gradient_accumulation_steps (--grad-accum)", d.grad_accum);
}

}  // namespace zt::train
