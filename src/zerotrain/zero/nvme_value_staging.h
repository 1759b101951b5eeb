// offload_param nvme with a host optimizer: the host groups' value runs view one host buffer,
// read from the swap file before their sub-group's update and written back after, so only one
// sub-group's values are in host memory at a time. Where each run starts in that buffer is a pure
// function of the runs' bytes. Tested by tests/zero/test_sub_groups.cpp.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "zerotrain/zero/sub_groups.h"

namespace zt::zero {

struct ValueStaging {
  std::vector<int64_t> offset;  // per host group: its first byte in the buffer (64-aligned)
  int64_t bytes = 0;            // the buffer: the largest sub-group's runs
};

// run_bytes: each host group's value run in bytes. Every sub-group's runs start at byte 0.
ValueStaging stage_values(std::span<const int64_t> run_bytes, std::span<const SubGroup> sub_groups);

}  // namespace zt::zero
