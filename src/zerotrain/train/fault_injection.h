// Deterministic non-finite values for the tests of the non-finite check (nonfinite_check.h), read
// from the environment once per run, in the style of ZT_CHECKPOINT_KILL_AT
// (checkpoint/fault_injection.h); unset, nothing happens:
//   ZT_FAULT_NAN_GRAD=STEP:PARAM[:inf]  at optimizer step STEP (1-based) the reduced gradient of
//                                      the parameter named PARAM (its HF name) gets a NaN (or
//                                      +Inf) in its first element, on every rank holding it;
//   ZT_FAULT_NAN_LOSS=STEP             the loss of step STEP reads NaN.
// Tested by tests/train/test_faults.cpp and used by tests/faults/fault_harness.py.
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
};

// Throws ValueError naming the variable and its value when it is malformed.
InjectedFaults injected_faults_from_env();

// At the step the faults name: writes the gradient's value (after the gradient sync) and returns
// the loss to use. Throws ValueError when no parameter has that name.
void inject_gradient_fault(const InjectedFaults& f, int64_t step, zero::ZeroStage& engine,
                           Stream stream);
double inject_loss_fault(const InjectedFaults& f, int64_t step, double loss);

}  // namespace zt::train
