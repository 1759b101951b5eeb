// The faults section of the run configuration: what a run does when its gradients or loss turn
// non-finite (--on-nonfinite) and how long it may take to stop on SIGTERM/SIGINT (--stop-grace).
// Used by trainer.cpp through nonfinite_check.h and stop_signal.h. Tested by
// tests/train/test_faults.cpp and tests/faults/fault_harness.py.
#pragma once

#include <string>

namespace zt::train {

// f32/bf16 runs (fp16's loss scaler skips overflowing steps by itself, [Note: fp16 step]):
// stop: the run ends at the first step whose gradients hold NaN or Inf, naming the step and the
//   first such parameter; nothing of that step is applied or saved, the last checkpoint stays
//   and model/ is not written.
// skip: that step's update is skipped (weights and optimizer state bitwise unchanged) and the
//   run goes on, as DeepSpeed's bf16 optimizer does with check_grad_overflow.
// A non-finite loss in f32/bf16 stops the run under either policy.
enum class NonFinitePolicy { stop, skip };

NonFinitePolicy parse_nonfinite_policy(const std::string& name);  // "stop" | "skip"
const char* nonfinite_policy_name(NonFinitePolicy p);

struct FaultConfig {
  NonFinitePolicy on_nonfinite = NonFinitePolicy::stop;
  // After the first SIGTERM/SIGINT the run has this long to finish its step, save and exit;
  // then it exits without saving ([Note: stop on a signal] in stop_signal.h).
  double stop_grace_s = 300;
};

// stop_grace_s finite and > 0; throws ValueError "[config] --stop-grace: ...".
void validate_fault_config(const FaultConfig& f);

}  // namespace zt::train
