// The precision section of the run configuration: the dtype of values and activations, the
// precision mode, the gradients' accumulation and reduction dtypes and fp16's loss scaler
// (--dtype, --precision, --grad-accum-dtype, --comm-dtype; a ds_config's bf16, fp16, data_types
// and communication_data_type). Tested by tests/train/test_run_config.cpp.
#pragma once

#include "zerotrain/core/dtype.h"
#include "zerotrain/optim/optimizer_config.h"
#include "zerotrain/optim/precision.h"
#include "zerotrain/train/loss_scaler.h"

namespace zt::train {

struct PrecisionConfig {
  // Parameters and activations; f32 masters when f16/bf16. f16 scales the loss gradient
  // (loss_scaler, [Note: fp16 step] in fp16_step.h).
  DType dtype = DType::f32;
  // With bf16: mixed keeps f32 masters and moments; low steps the bf16 values in place with bf16
  // moments ([Note: precision modes] in precision.h). Either way the precision guard
  // (precision_guard.h) checks rank 0's updates and warns once when they vanish.
  optim::Precision mode = optim::Precision::mixed;
  // The dtype gradients accumulate in over the micro-steps: f32 or `dtype`
  // (data_types.grad_accum_dtype), and the dtype they are summed in across the ranks: f32, bf16 or
  // f16 (communication_data_type). f32 for both unless set: see [Note: communication dtype] in
  // zero/grad_comm.h for why not DeepSpeed's defaults.
  DType grad_accum_dtype = DType::f32;
  DType comm_dtype = DType::f32;
  LossScalerOptions loss_scaler;  // f16 only: ds_config's fp16 section (DeepSpeed's defaults)
  // bf16 (ds_config bf16.check_grad_overflow): a non-finite gradient is an overflow as in fp16,
  // so the skipped step does not step the scheduler either ([Note: fp16 step]). Without it the
  // update is skipped all the same and the scheduler steps.
  bool check_grad_overflow = false;
};

// The one check of these values and of the optimizer against the mode: dtype f32, bf16 or f16;
// low only with bf16, Adam and without amsgrad; grad_accum_dtype f32 or dtype; comm_dtype f32,
// bf16 or f16. Throws ValueError "[config] <ds_config key> (--<flag>): ...".
void validate_precision_config(const PrecisionConfig& p, const optim::OptimizerConfig& optimizer);

}  // namespace zt::train
