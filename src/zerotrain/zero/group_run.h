// What the flat optimizer (optim/flat_optimizer.h) is told about one ParamGroup: its parameters
// and the run of its values it steps, with the pieces of each parameter the run covers. Tested
// by tests/zero/test_shard_optimizer.cpp and tests/zero/test_zero_stage.cpp.
#pragma once

#include <vector>

#include "zerotrain/core/tensor.h"
#include "zerotrain/optim/flat_optimizer.h"
#include "zerotrain/zero/optimizer_options.h"
#include "zerotrain/zero/param_group.h"

namespace zt::zero {

// The elements of group g's run: its shard (padding included) or its parameters' elements.
int64_t run_numel(const ParamGroup& g, RunExtent extent);
// Group g's value run where the group keeps it (on the device, or in host memory with
// offload_param).
Tensor run_value(const ParamGroup& g, RunExtent extent);

// Appends group g's parameters (numbered from params.size()) and its run over `value` (the
// group's value run, or a copy of it on another device or in host memory).
void add_group_run(const ParamGroup& g, RunExtent extent, Tensor value,
                   std::vector<optim::FlatParam>& params, std::vector<optim::FlatRun>& runs);

}  // namespace zt::zero
