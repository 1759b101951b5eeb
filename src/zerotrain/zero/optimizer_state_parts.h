// Cutting the initial optimizer state (fresh or a checkpoint's full state) into the parts the
// stage's optimizers take: the device optimizer and each host sub-group get their parameters'
// tensors. A pure function. Tested by tests/zero/test_optimizer_state_parts.cpp.
#pragma once

#include <set>
#include <span>
#include <string>

#include "zerotrain/optim/flat_optimizer.h"
#include "zerotrain/optim/optimizer_state.h"

namespace zt::zero {

// The parameter a state tensor belongs to: its name without the slot suffix (state_slots.h).
std::string param_of_state(const std::string& name);

// The tensors of `initial` whose parameter is one of `mine` (all of `initial` when mine holds
// every parameter of all_params), the step included. strays: also the tensors of no parameter
// in all_params, so that the optimizer taking them refuses them.
optim::OptimizerState state_part(const optim::OptimizerState& initial,
                                 const std::set<std::string>& all_params,
                                 std::span<const optim::FlatParam> mine, bool strays);

}  // namespace zt::zero
