// Where each group's optimizer run is stepped: on the training device or, offloaded, in host
// memory ([Note: optimizer offload] in shard_optimizer.h). A pure function of the runs' sizes and
// the offload_optimizer section. Tested by tests/zero/test_optimizer_placement.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "zerotrain/zero/offload_policy.h"

namespace zt::zero {

// Where a group's optimizer run is stepped.
enum class RunPlace { device, host };

struct OptimizerPlacement {
  std::vector<RunPlace> place;  // per group
  // Per group: its run in the device optimizer, or its host group (both counted in group order).
  std::vector<size_t> index;
  size_t device_runs = 0, host_runs = 0;
};

// Host groups are the first ones, up to `ratio` of the elements (all of them with ratio 1; none
// when offload_optimizer's device is none). numels: each group's shard elements, in group order.
OptimizerPlacement place_optimizer_runs(std::span<const int64_t> numels,
                                        const OptimizerOffload& offload);

}  // namespace zt::zero
