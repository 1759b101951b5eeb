// The host sub-groups' state in swap files; see nvme_state_swap.h.
#include "zerotrain/zero/nvme_state_swap.h"

#include "zerotrain/optim/state_slots.h"

namespace zt::zero {

std::vector<StateSwap::Slot> swap_slots(const optim::FlatOptimizer& sub_group) {
  std::vector<StateSwap::Slot> slots;
  for (const optim::FlatRun& r : sub_group.runs())
    for (const optim::StateSlot& slot :
         optim::state_slots(r.value.dtype(), sub_group.precision(), sub_group.config()))
      slots.push_back({r.value.numel(), slot.dtype});
  return slots;
}

void with_swapped_state(optim::FlatOptimizer& sub_group, StateSwap* swap, size_t s, bool write_back,
                        const std::function<void(optim::FlatOptimizer&)>& use) {
  if (!swap) return use(sub_group);
  sub_group.restore_state(swap->load(s));
  try {
    use(sub_group);
  } catch (...) {
    sub_group.evict_state();
    throw;
  }
  sub_group.evict_state();
  if (write_back) swap->write_back(s);  // else the staging buffer still equals the file
}

}  // namespace zt::zero
