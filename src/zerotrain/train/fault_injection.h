// Deterministic faults, behind one object (FaultHooks) that the trainer asks at fixed points of a
// step. Two sources: the config's test hook TrainConfig::test_hooks.inject_overflow_steps (tests of
// [Note: fp16 step]), and, for the tests of the non-finite check (nonfinite_check.h) and of the
// soak (tests/faults/soak.py), the environment, read once per run in the style of
// ZT_CHECKPOINT_KILL_AT (checkpoint/fault_injection.h); unset, nothing happens:
//   ZT_FAULT_NAN_GRAD=STEP:PARAM[:inf]  at optimizer step STEP (1-based) the reduced gradient of
//                                      the parameter named PARAM (its HF name) gets a NaN (or
//                                      +Inf) in its first element, on every rank holding it;
//   ZT_FAULT_NAN_LOSS=STEP             the loss of step STEP reads NaN;
//   ZT_FAULT_LEAK_BYTES=BYTES          every optimizer step keeps BYTES more of written host memory
//                                      (malloc'd) until the process exits, a leak for the soak.
// Tested by tests/train/test_faults.cpp and used by tests/faults/fault_harness.py and soak.py.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "zerotrain/zero/zero_stage.h"

namespace zt::train {

struct InjectedFaults {
  int64_t grad_step = 0;  // 0: none
  std::string grad_param;
  bool grad_inf = false;            // +Inf instead of NaN
  int64_t loss_step = 0;            // 0: none
  int64_t leak_bytes_per_step = 0;  // 0: none
};

// Throws ValueError naming the variable and its value when it is malformed.
InjectedFaults injected_faults_from_env();

class FaultHooks {
 public:
  FaultHooks() = default;  // none
  // `overflow_steps`: the optimizer steps (1-based) whose first micro-step's loss gradient is
  // multiplied by +inf on every rank, so that the step's gradients overflow.
  FaultHooks(InjectedFaults from_env, std::vector<int64_t> overflow_steps);

  // Whether optimizer step `step` (1-based) overflows on purpose.
  bool overflows_at(int64_t step) const;
  // After the gradient sync of step `step`: writes the named gradient's value. Throws ValueError
  // when no parameter has that name.
  void after_gradient_sync(int64_t step, zero::ZeroStage& engine, Stream stream) const;
  // The step's loss as the run sees it (NaN at the loss fault's step); keeps the leak's bytes.
  double after_loss(int64_t step, double loss) const;

 private:
  InjectedFaults env_;
  std::vector<int64_t> overflow_steps_;
};

}  // namespace zt::train
