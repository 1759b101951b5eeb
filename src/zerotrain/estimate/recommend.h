// The fastest configuration that fits a GPU: strategies from fastest to most frugal (stage 0, 1,
// 2, 3, 3 + offload_optimizer, 3 + offload_param + offload_optimizer), searched at the requested
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
// micro-batch if anything can, and pays for it with the cheapest change first.

struct Strategy {
  int stage = 0;
  bool offload_optimizer = false;
  bool offload_param = false;
};

// The six strategies, fastest first.
std::vector<Strategy> strategies_in_order();

struct Recommendation {
  bool found = false;
  PeakEstimate estimate;  // of the recommended setup, or of the most frugal one when none fits
  double gpu_memory = 0;  // bytes
  std::string line;       // one line for people
};

// base: the model, GPUs, sequence, requested micro-batch, dtype and buckets; its stage, offload
// and checkpointing fields are searched over, through `strategies` in their order (those with
// offload are left out of a host run's search). Throws ValueError for gpu_memory <= 0, an empty
// search or a bad base.
Recommendation recommend(const RunSetup& base, double gpu_memory,
                         const std::vector<Strategy>& strategies = strategies_in_order());

}  // namespace zt::estimate
