// The offload policy's refusal; see offload_policy.h.
#include "zerotrain/zero/offload_policy.h"

#include "zerotrain/core/error.h"

namespace zt::zero {

void check_offload_supported(const OffloadPolicy& policy) {
  const std::pair<const char*, const OffloadTarget*> targets[] = {
      {"offload_optimizer", &policy.optimizer}, {"offload_param", &policy.params}};
  for (const auto& [key, target] : targets)
    if (target->device != OffloadDevice::none)
      throw ValueError("config", str("zero_optimization.", key, ".device ",
                                     config::offload_device_name(target->device),
                                     ": not supported yet (optimizer state and parameter shards ",
                                     "stay on the training device; use device none)"));
}

}  // namespace zt::zero
