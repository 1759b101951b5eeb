// Placement of the optimizer runs; see optimizer_placement.h.
#include "zerotrain/zero/optimizer_placement.h"

namespace zt::zero {

OptimizerPlacement place_optimizer_runs(std::span<const int64_t> numels,
                                        const OptimizerOffload& offload) {
  int64_t total = 0;
  for (const int64_t n : numels)
    total += n;
  const bool offloaded = offload.device != OffloadDevice::none;
  OptimizerPlacement plan;
  int64_t host_elements = 0;
  for (const int64_t n : numels) {
    const bool host =
        offloaded && (offload.ratio >= 1.0 || static_cast<double>(host_elements + n) <=
                                                  offload.ratio * static_cast<double>(total));
    plan.place.push_back(host ? RunPlace::host : RunPlace::device);
    plan.index.push_back(host ? plan.host_runs++ : plan.device_runs++);
    if (host) host_elements += n;
  }
  return plan;
}

}  // namespace zt::zero
