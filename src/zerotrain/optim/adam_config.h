// The Adam family's settings as a run gives them (command-line flags or a ds_config's
// optimizer.params): the optimizer section of the run configuration, and what the one flat Adam
// of every ZeRO stage steps with. Doubles as typed; the step converts them to the f32 its kernels
// take. Tested with the optimizer (tests/optim/, tests/train/).
#pragma once

namespace zt::optim {

struct AdamConfig {
  double beta1 = 0.9;
  double beta2 = 0.95;
  double eps = 1e-8;
  // Applied to the "decay" group only (by default the weights, as the Hugging Face Trainer does).
  double weight_decay = 0.1;
  // true: AdamW's decoupled p *= 1 - lr * wd; false: torch.optim.Adam's L2 term, wd * p added to
  // the gradient (DeepSpeed's adam_w_mode).
  bool decoupled_weight_decay = true;
  // torch's amsgrad: the denominator uses the running max of v, a third f32 state tensor (not in
  // the low-precision mode).
  bool amsgrad = false;
  bool bias_correction = true;
};

}  // namespace zt::optim
