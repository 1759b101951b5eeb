// The optimizer section of the run configuration: which update rule the one flat optimizer of
// every ZeRO stage steps (flat_optimizer.h) and its settings, as a run gives them (command-line
// flags or a ds_config's optimizer section, read by rule_of). Doubles as typed; the step converts
// them to the f32 its kernels take. Tested with the optimizer (tests/optim/, tests/train/) and
// rule_of by tests/config/test_ds_train_config.cpp.
#pragma once

#include "zerotrain/config/ds_config.h"

namespace zt::optim {

// The update rules of optimizers.h a run may pick (ds_config optimizer.type).
enum class OptimizerKind {
  adam,  // Adam or AdamW (adam_w_mode), DeepSpeed's FusedAdam
  lamb,  // DeepSpeed's FusedLamb: Adam's moments and a per-parameter trust ratio
  lion,  // Lion (Chen et al. 2023), DeepSpeed's FusedLion
  sgd,   // torch.optim.SGD
};
const char* optimizer_kind_name(OptimizerKind kind);  // "Adam", "Lamb", "Lion", "SGD"

struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::adam;
  // Adam, Lamb, Lion (Lion: beta1 interpolates the update's sign, beta2 the moment); eps: Adam
  // and Lamb.
  double beta1 = 0.9;
  double beta2 = 0.95;
  double eps = 1e-8;
  // Applied to the "decay" group only (by default the weights, as the Hugging Face Trainer does).
  double weight_decay = 0.1;
  // Adam (DeepSpeed's adam_w_mode). true: AdamW's decoupled p *= 1 - lr * wd; false:
  // torch.optim.Adam's L2 term, wd * p added to the gradient.
  bool adam_w_mode = true;
  // Adam: torch's amsgrad, the denominator uses the running max of v, a third f32 state tensor
  // (not in the low-precision mode).
  bool amsgrad = false;
  bool bias_correction = true;  // Adam and Lamb
  // Lamb: the trust ratio |p| / |u| is clamped to [min_coeff, max_coeff]; eps inside the sqrt.
  double max_coeff = 10.0;
  double min_coeff = 0.01;
  bool eps_inside_sqrt = false;
  // SGD: momentum (a momentum buffer when > 0), dampening, Nesterov momentum.
  double momentum = 0.0;
  double dampening = 0.0;
  bool nesterov = false;
};

// Whether a rule has betas (Adam, Lamb, Lion) and eps (Adam, Lamb).
bool has_betas(OptimizerKind kind);
bool has_eps(OptimizerKind kind);

// The rule a ds_config's optimizer section asks for ("Adam"/"AdamW": adam, adam_w_mode folded in
// by the parser) with its params; the settings that rule does not have keep `base`'s values, and
// amsgrad is off for every rule but Adam. The peak lr is the schedule's (the params' lr).
OptimizerConfig rule_of(const config::OptimizerConfig& section, OptimizerConfig base);

}  // namespace zt::optim
