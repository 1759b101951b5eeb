// What the optimizer of a ZeRO stage's groups (shard_optimizer.h) is given: the update rule and
// its settings, what decays, and what a group's run covers. Tested by
// tests/zero/test_zero_stage.cpp and tests/mpi/test_zero_parity.cpp.
#pragma once

#include <memory>
#include <vector>

#include "zerotrain/nn/parameter.h"
#include "zerotrain/optim/flat_optimizer.h"
#include "zerotrain/zero/param_group.h"

namespace zt::zero {

// The "decay" group: weight decay applies to weights only, not norms, biases or embeddings (as
// the Hugging Face Trainer does).
bool decays(const nn::Parameter& p);

// What the optimizer is given: the update rule and its settings, the precision policy and the
// precision guard (null: none).
struct OptimizerOptions {
  optim::OptimizerConfig config;
  optim::Precision precision = optim::Precision::mixed;
  std::shared_ptr<optim::PrecisionGuard> guard;
};

enum class RunExtent {
  shard,   // a group's run is this rank's value shard, padding included (stages 1-3)
  params,  // a group's run is its parameters' elements, no padding (stage 0, a world of one)
};

}  // namespace zt::zero
