// The reduced gradient this rank holds after a step's gradient sync, parameter by parameter: the
// full gradient of every parameter at stage 0, the pieces of its shard of each group at stages
// 1-3 (zero/param_group.h). For the failure path of the non-finite check (nonfinite_check.h) and
// the gradient fault injection (fault_injection.h); tested through them by
// tests/train/test_faults.cpp.
#pragma once

#include <cstdint>
#include <vector>

#include "zerotrain/zero/zero_stage.h"

namespace zt::train {

struct OwnedGradient {
  const nn::Parameter* param = nullptr;
  int64_t index = 0;  // the parameter's position in the engine's groups, counted over all of them
  Tensor values;      // 1-D view of the part of its reduced gradient this rank holds
};

// In group order, then the order of each group's parameters.
std::vector<OwnedGradient> owned_gradients(const zero::ZeroStage& engine);

}  // namespace zt::train
