// Counting the unmasked targets of a host batch; see loss_targets.h.
#include "zerotrain/nn/loss_targets.h"

namespace zt::nn {

int64_t count_loss_targets(const Tensor& targets, Stream stream) {
  int64_t n = 0;
  for (int64_t t : targets.to_ints(stream))
    n += t != kIgnoreIndex;
  return n;
}

}  // namespace zt::nn
