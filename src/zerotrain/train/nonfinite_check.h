// What a f32/bf16 run does with a non-finite loss or gradient norm (FaultConfig::on_nonfinite,
// fault_config.h), and which parameter's gradient went non-finite first. Used by trainer.cpp
// before the step plan (fp16_step.h); tested by tests/train/test_faults.cpp and, under mpirun at
// every stage, tests/faults/fault_harness.py.
//
// [Note: non-finite check]
// The global gradient norm (zero/grad_norm.h) already reads every gradient value each step, and a
// single NaN or Inf makes it non-finite: it is the whole check, no extra pass. Only when it is
// non-finite (and the policy is stop) does the run look for the first parameter, in the model's
// order, whose gradient holds one: each rank scans the part of the reduced gradient it holds (all
// of it at stage 0, its shard of each group at stages 1-3), and the ranks agree on the smallest
// index, so every rank names the same parameter. A non-finite loss looks at the parameters the
// forward read instead (a model file with a NaN weight stops the first step naming that tensor).
#pragma once

#include <cstdint>
#include <string>

#include "zerotrain/train/trainer.h"
#include "zerotrain/zero/zero_stage.h"

namespace zt::train {

// Every rank calls this after the gradient sync with the step's (global) loss and gradient norm;
// it returns when the step may go on (a skipped step is fp16_step.h's business) and otherwise
// throws ValueError "[train] step N: ..." naming the non-finite loss (and the first parameter
// holding NaN or Inf, if one does), or the non-finite gradient norm and the first parameter whose
// gradient is not finite. `loss_scaling`: fp16, whose scaler
// handles both (this then returns at once). Collective when the gradient is searched.
void stop_on_nonfinite(const TrainConfig& c, bool loss_scaling, int64_t step, double loss,
                       double grad_norm, zero::ZeroStage& engine, Stream stream);

// Collective: the HF name of the first parameter (in the engine's group order) whose reduced
// gradient holds NaN or Inf, the same on every rank; empty when none does.
std::string first_nonfinite_gradient(zero::ZeroStage& engine, comm::Communicator* comm,
                                     Stream stream);

// Collective: the HF name of the first parameter (in group order) whose value holds NaN or Inf,
// the same on every rank (each sees the full values); empty when none does.
std::string first_nonfinite_parameter(zero::ZeroStage& engine, Stream stream);

}  // namespace zt::train
