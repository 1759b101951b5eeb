// Global gradient-norm clipping, torch.nn.utils.clip_grad_norm_ semantics, folded into the
// optimizer's grad_scale instead of rewriting the gradients: the L2 norm over every gradient
// (kernels::global_l2_norm, one device->host read of one float), then
//   clip_coef = min(1, max_norm / (norm + 1e-6)).
// With loss scaling the gradients hold loss_scale * g: the norm is divided by loss_scale before the
// coefficient is taken, and grad_scale = clip_coef / loss_scale unscales and clips in one multiply.
// A non-finite norm (an overflow, a NaN loss) is reported, not acted on: the caller skips the step.
// Tested by tests/train/test_grad_clip.cpp.
#pragma once

#include <vector>

#include "zerotrain/core/tensor.h"
#include "zerotrain/nn/parameter.h"

namespace zt::train {

struct ClipResult {
  double norm = 0;         // the unscaled global L2 norm before clipping (what the Trainer logs)
  bool finite = true;      // false: norm is inf or NaN; clip_coef and grad_scale are then NaN
  double clip_coef = 1;    // in (0, 1]; 1 when no clipping happens or max_norm <= 0
  float grad_scale = 1.f;  // clip_coef / loss_scale, for Optimizer::step (which refuses a NaN)
};

// min(1, max_norm / (norm + 1e-6)); 1 when max_norm <= 0 (clipping off). norm must be finite.
double clip_coefficient(double norm, double max_norm);

// The global L2 norm of `grads` (all on one device; any floating dtypes), read back to the host.
double global_grad_norm(const std::vector<Tensor>& grads, Stream stream = {});

// The norm of every parameter's gradient and the scale that clips it to max_norm (max_norm <= 0:
// no clipping, the norm is still measured). loss_scale: what the loss was multiplied by before
// backward (1 for bf16/f32). Throws ValueError for an undefined gradient (naming the parameter) or
// a loss_scale that is not finite and > 0.
ClipResult clip_grad_norm(const std::vector<nn::Parameter*>& params, double max_norm,
                          double loss_scale = 1.0, Stream stream = {});

}  // namespace zt::train
