// The fastest configuration that fits a GPU (and the host): strategies from fastest to most frugal
// (stage 0, 1, 2, 3, then offload: 2 + offload_optimizer=cpu, 3 + offload_optimizer=cpu, 3 +
// offload_param=cpu + offload_optimizer=cpu, then the same with nvme), searched at the requested
// micro-batch first without then with activation checkpointing, then at halved micro-batches.
// See [Note: recommendation order]. Tested by tests/estimate/test_recommend.cpp.
#pragma once

#include <string>
#include <vector>

#include "zerotrain/estimate/peak_estimate.h"

namespace zt::estimate {

// [Note: recommendation order]
// For micro-batch m = requested, requested/2, ..., 1; for checkpointing off, then on; for each
// strategy in order: the first whose `needed` fits the GPU memory wins. A smaller micro-batch
// costs throughput only through GEMM efficiency, checkpointing costs a second forward (~1/3 more
// compute), offload costs PCIe traffic and a CPU optimizer step: the order keeps the requested
// micro-batch if anything can, and pays for it with the cheapest change first. Among offloads,
// stage 2 (no parameter gathers) comes before stage 3, the optimizer before the parameters (the
// parameters cross PCIe twice a step, the optimizer state never), host memory before NVMe (swap
// reads and writes every step). A setup fits when its GPU `needed` fits the GPU and, with a host
// budget, its host_per_node fits the host.

struct Strategy {
  int stage = 0;
  OffloadDevice offload_optimizer = OffloadDevice::none;
  OffloadDevice offload_param = OffloadDevice::none;
  bool operator==(const Strategy&) const = default;
};

// The ten strategies, fastest first.
std::vector<Strategy> strategies_in_order();

struct Recommendation {
  bool found = false;
  PeakEstimate estimate;   // of the recommended setup, or of the most frugal one when none fits
  double gpu_memory = 0;   // bytes
  double host_memory = 0;  // bytes per node; 0: not limited
  std::string line;        // one line for people
};

// base: the model, GPUs, sequence, requested micro-batch, dtype and buckets; its stage, offload
// and checkpointing fields are searched over, through `strategies` in their order (those with
// offload are left out of a host run's search). host_memory: the host bytes per node the offloads
// may hold (0: not limited). Throws ValueError for gpu_memory <= 0, host_memory < 0, an empty
// search or a bad base.
Recommendation recommend(const RunSetup& base, double gpu_memory,
                         const std::vector<Strategy>& strategies = strategies_in_order(),
                         double host_memory = 0);

}  // namespace zt::estimate
