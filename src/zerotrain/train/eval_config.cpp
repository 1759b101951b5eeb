// validate_eval_config (eval_config.h).
#include "zerotrain/train/eval_config.h"

#include "zerotrain/core/error.h"

namespace zt::train {

void validate_eval_config(const EvalConfig& e) {
  if (e.every && *e.every <= 0)
    throw ValueError("config", str("--eval-every: must be > 0, got ", *e.every));
  if (e.batches && *e.batches <= 0)
    throw ValueError("config", str("--eval-batches: must be > 0, got ", *e.batches));
  if (e.enabled()) return;
  if (e.every)
    throw ValueError("config", str("--eval-every ", *e.every, ": there is no --eval-data"));
  if (e.batches)
    throw ValueError("config", str("--eval-batches ", *e.batches, ": there is no --eval-data"));
  if (e.only) throw ValueError("config", "--eval-only: there is no --eval-data");
}

}  // namespace zt::train
