// validate_precision_config (precision_config.h).
#include "zerotrain/train/precision_config.h"

#include "zerotrain/core/error.h"

namespace zt::train {

namespace {

bool float_dtype(DType d) {
  return d == DType::f32 || d == DType::bf16 || d == DType::f16;
}

}  // namespace

void validate_precision_config(const PrecisionConfig& p, const optim::OptimizerConfig& optimizer) {
  if (!float_dtype(p.dtype))
    throw ValueError("config", str("bf16.enabled / fp16.enabled (--dtype): must be f32, bf16 or "
                                   "f16, got ",
                                   dtype_name(p.dtype)));
  if (p.mode == optim::Precision::low && p.dtype != DType::bf16)
    throw ValueError("config", str("bf16.bf16_master_weights_and_grads (--precision low): needs "
                                   "dtype bf16, got ",
                                   dtype_name(p.dtype)));
  if (p.mode == optim::Precision::low && optimizer.kind != optim::OptimizerKind::adam)
    throw ValueError("config", str("optimizer.type ", optim::optimizer_kind_name(optimizer.kind),
                                   ": steps f32 masters; the low-precision mode (--precision low, ",
                                   "bf16.bf16_master_weights_and_grads) is Adam's alone"));
  if (p.mode == optim::Precision::low && optimizer.amsgrad)
    throw ValueError("config",
                     "optimizer.params.amsgrad (--amsgrad): true needs an f32 max_exp_avg_sq, "
                     "which the low-precision mode (--precision low, "
                     "bf16.bf16_master_weights_and_grads) does not keep; turn one off");
  // The backward kernels add weight gradients into f32 or the weights' own dtype.
  if (p.grad_accum_dtype != DType::f32 && p.grad_accum_dtype != p.dtype)
    throw ValueError("config", str("data_types.grad_accum_dtype (--grad-accum-dtype): ",
                                   dtype_name(p.grad_accum_dtype),
                                   " needs the model in that dtype (--dtype / bf16.enabled), or "
                                   "use f32"));
  if (!float_dtype(p.comm_dtype))
    throw ValueError("config", str("communication_data_type (--comm-dtype): must be f32, bf16 or "
                                   "f16, got ",
                                   dtype_name(p.comm_dtype)));
}

}  // namespace zt::train
