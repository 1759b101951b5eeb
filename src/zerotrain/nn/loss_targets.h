// The loss's ignore index and the count of the targets a loss is averaged over, counted on the
// host from a batch's targets (the trainer counts every micro-batch of a step before the first one
// runs, so the head never waits for the device to learn it). See [Note: loss normalisation] in
// nn/head_block.h. Tested by tests/nn/test_head_block.cpp.
#pragma once

#include <cstdint>

#include "zerotrain/core/tensor.h"

namespace zt::nn {

// A target with this id is masked out of the loss (labels == -100 in transformers).
inline constexpr int64_t kIgnoreIndex = -100;

// The targets != kIgnoreIndex of `targets` (i32 or i64). On a device this copies them to the host
// and waits for `stream`: the trainer counts its host batches instead.
int64_t count_loss_targets(const Tensor& targets, Stream stream = {});

}  // namespace zt::nn
