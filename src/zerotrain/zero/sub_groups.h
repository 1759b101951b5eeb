// The host optimizer's sub-groups (zero_optimization.sub_group_size): consecutive host groups
// packed into units of about sub_group_size elements, whole groups each, so one sub-group's
// transfers and swap reads overlap the previous one's update ([Note: optimizer offload] in
// shard_optimizer.h). Pure functions. Tested by tests/zero/test_sub_groups.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace zt::zero {

// Host groups [first, last), numbered in group order.
struct SubGroup {
  size_t first = 0, last = 0;
};

// numels: each host group's run elements. A sub-group takes groups while their sum stays within
// sub_group_size, and always at least one (a group larger than sub_group_size is a sub-group of
// its own); the last one may be short.
std::vector<SubGroup> split_sub_groups(std::span<const int64_t> numels, int64_t sub_group_size);

// The sub-group holding host group `i`.
size_t sub_group_of(std::span<const SubGroup> sub_groups, size_t i);

}  // namespace zt::zero
