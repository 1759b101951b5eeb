// What one optimizer step does with its global gradient norm and the loss scale: whether the
// update and the scheduler step run, the norm to log and the optimizer's grad_scale; plus the
// per-micro-step loss-gradient multiplier, with the overflow-injection test hook. Used by
// train/trainer.cpp; tested by tests/train/test_fp16_step.cpp and
// tests/train/test_trainer_fp16.cpp.
//
// [Note: fp16 step]
// With dtype f16 the loss gradient is multiplied by the loss scale (loss_scaler.h) so that small
// gradients survive the f16 backward; the f32 gradients then hold scale x g. After the gradient
// sync, the global norm (collective, [Note: chunked gradient norm]) decides, as DeepSpeed's ZeRO
// optimizers do:
// - non-finite: an overflow. No optimizer step (masters, values and moments stay bitwise as they
//   were, the optimizer's step count too) and no scheduler step (DeepSpeed's engine steps its lr
//   scheduler only after an applied update); the step counts as skipped. The scaler updates.
// - finite: the scaler updates, then the update runs with grad_scale = clip_coef / scale, where
//   clip_coef clips on the unscaled norm (norm / scale): unscaling and clipping in one multiply
//   inside the optimizer, as grad_clip.h describes. The logged norm is the unscaled one.
// One difference from DeepSpeed: DeepSpeed divides by the scale *after* its update, so on a step
// where the scale doubles its gradients come out halved; zerotrain divides by the scale the
// backward used, which gives the true gradient on every step.
// f32 and bf16 runs have no scaler (scale 1): a non-finite norm stops the run unless
// --on-nonfinite skip ([Note: non-finite check] in nonfinite_check.h, which runs first); with
// skip the update is skipped but the scheduler still steps ([Note: trainer scheduler]); bf16 with
// check_grad_overflow (DeepSpeed's default in a ds_config) treats it as an fp16 overflow: no
// scheduler step either.
#pragma once

#include <cstdint>
#include <optional>

#include "zerotrain/train/loss_scaler.h"
#include "zerotrain/train/trainer.h"

namespace zt::train {

struct StepPlan {
  bool overflow = false;       // the gradients hold inf or NaN
  bool update = true;          // run the optimizer step
  bool step_scheduler = true;  // step the lr scheduler after it
  double loss_scale = 1;       // the scale this step's gradients carry
  double norm = 0;             // the unscaled global norm (non-finite on an overflow)
  float grad_scale = 1.f;      // clip_coef / loss_scale, for the optimizer (when update)
};

// Decides the step from the norm of the gradients as they are (loss_scale x the true ones);
// `scaler`: the fp16 run's, updated here; nullopt for f32/bf16. `clip` <= 0: no clipping.
// check_overflow: bf16's check_grad_overflow. See [Note: fp16 step].
StepPlan plan_step(double scaled_norm, double clip, std::optional<LossScaler>& scaler,
                   bool check_overflow = false);

// The fp16 run's scaler (c.precision.loss_scaler), nullopt for other dtypes.
std::optional<LossScaler> make_loss_scaler(const TrainConfig& c);

// ctx.loss_scale of the micro-steps of an optimizer step: the scale itself, since the head divides
// by the step's global count of unmasked targets ([Note: loss normalisation] in nn/head_block.h),
// so the summed gradients are scale x those of the global batch's loss; +inf when `inject` (the
// test hook TrainConfig::test_hooks.inject_overflow_steps, FaultHooks::overflows_at in
// fault_injection.h).
float micro_loss_scale(double scale, bool inject = false);

}  // namespace zt::train
