// The optimizer section of the run configuration: which update rule the one flat optimizer of
// every ZeRO stage steps (flat_optimizer.h) and its settings, as a run gives them (command-line
// flags or a ds_config's optimizer section). Doubles as typed; the step converts them to the f32
// its kernels take. Tested with the optimizer (tests/optim/, tests/train/).
#pragma once

namespace zt::optim {

// The update rules of optimizers.h a run may pick (ds_config optimizer.type).
enum class OptimizerKind {
  adam,  // Adam or AdamW (decoupled_weight_decay), DeepSpeed's FusedAdam
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
  // Adam. true: AdamW's decoupled p *= 1 - lr * wd; false: torch.optim.Adam's L2 term, wd * p
  // added to the gradient (DeepSpeed's adam_w_mode).
  bool decoupled_weight_decay = true;
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

}  // namespace zt::optim
