// Where a ZeRO stage keeps the optimizer state and the parameter shards: on the device (none), in
// host memory (cpu) or on an NVMe path, pinned or not (DeepSpeed's offload_optimizer /
// offload_param, FSDP2's CPUOffloadPolicy). A frozen policy handed to make_zero_stage, the one
// place that asks; today only "none" is implemented and anything else is refused with one line.
// Tested by tests/zero/test_zero_stage.cpp.
#pragma once

#include <string>

#include "zerotrain/config/offload_device.h"

namespace zt::zero {

// DeepSpeed's offload devices (config/offload_device.h), so a ds_config maps on unchanged.
using config::OffloadDevice;

struct OffloadTarget {
  OffloadDevice device = OffloadDevice::none;
  bool pin_memory = false;  // page-locked host buffers (cpu, nvme staging)
  std::string nvme_path;    // nvme only
};

struct OffloadPolicy {
  OffloadTarget optimizer;  // offload_optimizer: masters and moments
  OffloadTarget params;     // offload_param: stage 3's value shards
};

// Throws ValueError naming the DeepSpeed key and the device unless both targets are none.
void check_offload_supported(const OffloadPolicy& policy);

}  // namespace zt::zero
