// Deterministic faults for the tests of the non-finite check (nonfinite_check.h) and of the soak
// (tests/faults/soak.py), read from the environment once per run, in the style of
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

#include "zerotrain/zero/zero_stage.h"

namespace zt::train {

struct InjectedFaults {
  int64_t grad_step = 0;  // 0: none
  std::string grad_param;
  bool grad_inf = false;  // +Inf instead of NaN
  int64_t loss_step = 0;  // 0: none
  int64_t leak_bytes_per_step = 0;  // 0: none
};

// Throws ValueError naming the variable and its value when it is malformed.
InjectedFaults injected_faults_from_env();

// At the step the faults name: writes the gradient's value (after the gradient sync) and returns
// the loss to use. Throws ValueError when no parameter has that name.
void inject_gradient_fault(const InjectedFaults& f, int64_t step, zero::ZeroStage& engine,
                           Stream stream);
double inject_loss_fault(const InjectedFaults& f, int64_t step, double loss);
// Keeps f.leak_bytes_per_step more bytes of written host memory until the process exits.
void inject_leak_fault(const InjectedFaults& f);

}  // namespace zt::train
