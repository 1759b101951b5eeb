// What a checkpoint saves of the optimizer: the updates taken and the full per-parameter state
// tensors, named "<param><suffix>" after the state-slot table (state_slots.h). The flat optimizer
// (flat_optimizer.h) loads its slice of one and the ZeRO engine gathers one from the shards
// (zero/optimizer_options.h). Tested by tests/optim/test_flat_adam.cpp, test_flat_optimizer.cpp
// and tests/train/test_trainer_resume.cpp.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "zerotrain/core/tensor.h"

namespace zt::optim {

// Every tensor is shaped like its parameter, f32 (bf16 moments of bf16 values in
// Precision::low). An empty state with step 0 is a fresh optimizer.
struct OptimizerState {
  int64_t step = 0;  // updates taken
  std::map<std::string, Tensor> tensors;
};

}  // namespace zt::optim
