// A toy block of experts for [Note: experts as one unit] (nn/expert_block.h): a router weight, a
// norm weight, and `experts` experts y_e = x * w_e (w_e [C] over the columns). Its forward runs
// every expert on every row, y = x + sum_e y_e, standing in for a router (no routing here).
// Used by tests/nn/test_expert_block.cpp and tests/zero/test_zero_expert_unit.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "zerotrain/nn/expert_block.h"

namespace zt::test {

// name: "model.layers.<i>"; parameters: <name>.mlp.gate.weight [E, C], <name>.norm.weight [C],
// <name>.mlp.experts.<e>.weight [C].
// One expert of the toy: "<prefix>.weight" [hidden].
std::unique_ptr<nn::Sublayer> make_scale_expert(const std::string& prefix, int64_t hidden);

std::unique_ptr<nn::ExpertBlock> make_expert_toy(const std::string& name, int64_t experts,
                                                 int64_t hidden);

}  // namespace zt::test
