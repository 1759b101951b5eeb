// A step's batches and its global count of loss targets; see step_batches.h.
#include "zerotrain/train/step_batches.h"

#include "zerotrain/nn/loss_targets.h"

namespace zt::train {

std::vector<data::Batch> next_batches(data::DataLoader& loader, int64_t micro_steps) {
  std::vector<data::Batch> batches;
  for (int64_t m = 0; m < micro_steps; ++m)
    batches.push_back(loader.next());
  return batches;
}

int64_t global_loss_targets(const std::vector<data::Batch>& batches, zero::ZeroStage& engine) {
  int64_t mine = 0;
  for (const data::Batch& b : batches)
    mine += nn::count_loss_targets(b.targets);
  return static_cast<int64_t>(engine.sum_over_ranks(static_cast<double>(mine)));
}

}  // namespace zt::train
