// The offload flags of `zerotrain train` (--offload-optimizer, --offload-param, --nvme-path,
// --pin-memory, --sub-group-size) onto the ZeRO section's OffloadPolicy (zero/offload_policy.h).
// Without a ds_config they set the policy; with one they travel as overrides (train_overrides in
// ds_train_config.h, resolve_auto.h) that fill the file's missing keys and must agree with its
// set ones, and the file's sections then replace the policy. Tested by
// tests/config/test_ds_train_config.cpp and the CLI ctest train_offload_flags.
#pragma once

#include <cstdint>
#include <string>

#include "zerotrain/config/overrides.h"
#include "zerotrain/config/zero_keys.h"
#include "zerotrain/zero/zero_config.h"

namespace zt::train {

struct OffloadFlags {
  std::string optimizer = "none";  // --offload-optimizer: none, cpu or nvme
  std::string params = "none";     // --offload-param: none, cpu or nvme
  std::string nvme_path;           // --nvme-path: the directory swap files are made under
  bool pin_memory = false;         // --pin-memory: page-locked host buffers
  // --sub-group-size: elements per host optimizer unit
  int64_t sub_group_size = config::zero_keys::kSubGroupSize.default_value;
};

// Sets z.offload's devices, nvme_path and pin_memory (both sections) and sub_group_size. Throws
// ValueError for a device name other than none, cpu, nvme.
void apply_offload_flags(const OffloadFlags& flags, zero::ZeroConfig& z);

// The checks that only flags without a ds_config need, each naming the ds_config key and the
// flag: --offload-param at a stage other than 3, --offload-optimizer at stage 0, --nvme-path with
// no nvme device, --pin-memory with nothing offloaded. (With a ds_config, load_ds_config applies
// DeepSpeed's rules and resolve_auto's.)
void check_offload_flags(const zero::ZeroConfig& z, const config::GivenFlags& given);

}  // namespace zt::train
