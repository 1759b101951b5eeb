// Where a ZeRO stage keeps the optimizer state and the parameter shards: on the device (none), in
// host memory (cpu) or in swap files under an NVMe path (DeepSpeed's offload_optimizer /
// offload_param, ZeRO-Offload and ZeRO-Infinity; FSDP2's CPUOffloadPolicy). A frozen policy
// inside the ZeRO section (zero_config.h), validated once by validate_zero_config, honoured by
// make_zero_stage. Tested by tests/zero/test_zero_stage.cpp and tests/mpi/test_zero_parity.cpp.
#pragma once

#include <cstdint>
#include <string>

#include "zerotrain/config/aio_config.h"
#include "zerotrain/config/offload_device.h"
#include "zerotrain/config/zero_keys.h"

namespace zt::zero {

// DeepSpeed's offload devices (config/offload_device.h), so a ds_config maps on unchanged.
using config::OffloadDevice;

// What the two offload sections share.
struct OffloadTarget {
  OffloadDevice device = OffloadDevice::none;
  bool pin_memory = false;  // page-locked host buffers (cpu, and nvme's staging buffers)
  std::string nvme_path;    // nvme: the directory the run's swap directory is made in
  // nvme: staging buffers in host memory, so reads of the next sub-group overlap this one's use
  // (offload_optimizer 4, offload_param 5).
  int64_t buffer_count = config::zero_keys::kOptimizerBufferCount.default_value;
};

// zero_optimization.offload_optimizer: masters, moments (and amsgrad's state) at stages 1-3.
struct OptimizerOffload : OffloadTarget {
  // Stage 3's partial offload: the first `ratio` of the state (in elements, whole groups) is
  // stepped on the host, the rest on the device at the same time. 1: all of it.
  double ratio = 1.0;
};

// zero_optimization.offload_param: stage 3's value shards.
struct ParamOffload : OffloadTarget {
  ParamOffload() { buffer_count = config::zero_keys::kParamBufferCount.default_value; }
  // nvme: elements per staging buffer
  int64_t buffer_size = config::zero_keys::kParamBufferSize.default_value;
  // nvme: elements kept in host memory besides the buffers
  int64_t max_in_cpu = config::zero_keys::kParamMaxInCpu.default_value;
};

struct OffloadPolicy {
  OptimizerOffload optimizer;
  ParamOffload params;
  // Elements the host optimizer steps as one unit (zero_optimization.sub_group_size): whole
  // groups are packed into sub-groups of about this size, and one sub-group's transfers (and
  // swap reads) overlap the previous one's update.
  int64_t sub_group_size = config::zero_keys::kSubGroupSize.default_value;
  config::AioConfig aio;  // nvme: how swap files are read and written
};

// The one check of a policy at ZeRO stage `stage` (DeepSpeed's rules): offload_optimizer needs
// stage 1-3, offload_param stage 3, a ratio below 1 stage 3, nvme a path; every count and size
// positive. Throws ValueError "[config] zero_optimization.<key>: ..." naming the value.
void validate_offload_policy(const OffloadPolicy& policy, int stage);

}  // namespace zt::zero
