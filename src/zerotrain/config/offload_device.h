// Where DeepSpeed's offload sections put state: the training device (none), host memory (cpu) or
// an NVMe path. Its own header because the ZeRO engine's OffloadPolicy (zero/offload_policy.h)
// takes the same enum.
#pragma once

#include <string>

namespace zt::config {

enum class OffloadDevice { none, cpu, nvme };

// As DeepSpeed spells it: "none", "cpu", "nvme" (names.cpp).
std::string offload_device_name(OffloadDevice d);

}  // namespace zt::config
