// One optimizer step's batches, read before its first micro-step, and the step's global count of
// unmasked targets that the loss is divided by ([Note: loss normalisation] in nn/head_block.h).
// Used by train/trainer.cpp; tested by tests/mpi/test_loss_normalisation.cpp.
#pragma once

#include <cstdint>
#include <vector>

#include "zerotrain/data/data_loader.h"
#include "zerotrain/zero/zero_stage.h"

namespace zt::train {

// The next `micro_steps` batches of this rank.
std::vector<data::Batch> next_batches(data::DataLoader& loader, int64_t micro_steps);

// Collective: the targets != -100 of every rank's `batches`, counted on the host and summed over
// the ranks with one small collective (exact: integers far below 2^53). Each rank counts only its
// own data and no count waits for the device; the ranks meet at every step's gradient reduction
// anyway, so the collective costs one round trip of latency per step.
int64_t global_loss_targets(const std::vector<data::Batch>& batches, zero::ZeroStage& engine);

}  // namespace zt::train
