// Names of the update rules and rule_of; see optimizer_config.h. Tested by
// tests/optim/test_flat_optimizer.cpp and tests/config/test_ds_train_config.cpp.
#include "zerotrain/optim/optimizer_config.h"

#include <variant>

namespace zt::optim {

bool has_betas(OptimizerKind kind) {
  return kind != OptimizerKind::sgd;
}

bool has_eps(OptimizerKind kind) {
  return kind == OptimizerKind::adam || kind == OptimizerKind::lamb;
}

OptimizerConfig rule_of(const config::OptimizerConfig& section, OptimizerConfig o) {
  if (const auto* l = std::get_if<config::LambParams>(&section.params)) {
    o.kind = OptimizerKind::lamb;
    o.weight_decay = l->weight_decay;
    o.beta1 = l->beta1;
    o.beta2 = l->beta2;
    o.eps = l->eps;
    o.bias_correction = l->bias_correction;
    o.eps_inside_sqrt = l->eps_inside_sqrt;
    o.max_coeff = l->max_coeff;
    o.min_coeff = l->min_coeff;
    o.amsgrad = false;
  } else if (const auto* n = std::get_if<config::LionParams>(&section.params)) {
    o.kind = OptimizerKind::lion;
    o.weight_decay = n->weight_decay;
    o.beta1 = n->beta1;
    o.beta2 = n->beta2;
    o.amsgrad = false;
  } else if (const auto* s = std::get_if<config::SgdParams>(&section.params)) {
    o.kind = OptimizerKind::sgd;
    o.weight_decay = s->weight_decay;
    o.momentum = s->momentum;
    o.dampening = s->dampening;
    o.nesterov = s->nesterov;
    o.amsgrad = false;
  } else {
    // DeepSpeed: "AdamW" always decouples; "Adam" does unless adam_w_mode is false, which makes
    // it torch.optim.Adam (L2 decay in the gradient); parse_optimizer.cpp folds both into
    // adam_w_mode. torch_adam picks torch's implementation over FusedAdam: the same update.
    const auto& a = std::get<config::AdamParams>(section.params);
    o.kind = OptimizerKind::adam;
    o.weight_decay = a.weight_decay;
    o.beta1 = a.beta1;
    o.beta2 = a.beta2;
    o.eps = a.eps;
    o.adam_w_mode = a.adam_w_mode;
    o.amsgrad = a.amsgrad;
    o.bias_correction = a.bias_correction;
  }
  return o;
}

const char* optimizer_kind_name(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::adam:
      return "Adam";
    case OptimizerKind::lamb:
      return "Lamb";
    case OptimizerKind::lion:
      return "Lion";
    case OptimizerKind::sgd:
      return "SGD";
  }
  return "?";
}

}  // namespace zt::optim
