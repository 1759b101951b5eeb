// A DeepSpeed OneCycle scheduler block for the tests that cycle momentum through the ZeRO engine
// (tests/zero/test_zero_stage.cpp, tests/mpi/test_zero_parity.cpp): lr and beta1 cycle between
// their bounds over `step_size` steps up and down ([Note: trainer scheduler]).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

#include "zerotrain/config/scheduler_config.h"

namespace zt::test {

inline config::SchedulerConfig one_cycle(bool cycle_momentum, int64_t step_size) {
  return config::parse_scheduler_block(nlohmann::json{{"type", "OneCycle"},
                                                      {"params",
                                                       {{"cycle_min_lr", 1e-3},
                                                        {"cycle_max_lr", 1e-2},
                                                        {"cycle_first_step_size", step_size},
                                                        {"cycle_momentum", cycle_momentum},
                                                        {"cycle_min_mom", 0.8},
                                                        {"cycle_max_mom", 0.9}}}});
}

}  // namespace zt::test
