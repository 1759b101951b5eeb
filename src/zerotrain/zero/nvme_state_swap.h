// How the host optimizer's sub-groups use their swap files with offload_optimizer nvme
// (state_swap.h holds the file and its staging buffers): each sub-group's slots as the swap
// layout, and a sub-group's state read in around a use and evicted after it. Tested by
// tests/zero/test_state_swap.cpp and tests/mpi/test_zero_parity.cpp.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "zerotrain/optim/flat_optimizer.h"
#include "zerotrain/zero/state_swap.h"

namespace zt::zero {

// A sub-group's flat state tensors in its swap file: every run's state slots, run by run.
std::vector<StateSwap::Slot> swap_slots(const optim::FlatOptimizer& sub_group);

// Runs `use` on sub-group s's optimizer with its state in memory: read in from `swap` (null: it
// stays in memory) and evicted after, written back to the file when `write_back` and use returned.
void with_swapped_state(optim::FlatOptimizer& sub_group, StateSwap* swap, size_t s, bool write_back,
                        const std::function<void(optim::FlatOptimizer&)>& use);

}  // namespace zt::zero
