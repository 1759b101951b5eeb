// What adam_step (optimizers.cpp) and adam_step_lowp (low_precision.cpp) share: the checks of the
// hyper-parameters and step arguments, and the per-run f32 constants (computed in double, rounded
// once). Internal to optim/. Tested through tests/optim/.
#pragma once

#include <string_view>

#include "zerotrain/optim/cpu/consts.h"
#include "zerotrain/optim/optimizers.h"

namespace zt::optim {

// Throws ValueError naming `op` and the bad hyper-parameter or argument.
void check_adam(std::string_view op, const AdamParams& hp, const StepArgs& args);
// The constants of one run with this weight decay.
cpu::AdamConsts adam_consts(const AdamParams& hp, const StepArgs& args, float weight_decay);

}  // namespace zt::optim
