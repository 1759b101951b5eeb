// optimizer {type, params, legacy_fusion}: Adam, AdamW, Lamb, Lion and SGD with the parameters
// DeepSpeed passes to FusedAdam / FusedLamb / FusedLion / torch.optim.SGD (their constructors'
// keyword arguments, with those constructors' defaults; a setting they refuse is refused here).
// The type is matched ignoring case, as DeepSpeed lowercases its own optimizers' names.
// Tested by tests/config/test_ds_config_corpus.cpp (the optimizer files of the corpus) and
// tests/config/test_ds_config_optimizers.cpp.
#include <cctype>

#include "zerotrain/config/nearest_name.h"
#include "zerotrain/config/parse_sections.h"
#include "zerotrain/core/error.h"

namespace zt::config {

namespace {

const std::vector<std::string> kTypes = {"Adam", "AdamW", "Lamb", "Lion", "SGD"};
// DeepSpeed optimizers zerotrain does not implement.
const std::vector<std::string> kUnsupportedTypes = {
    "Adagrad", "OneBitAdam", "ZeroOneAdam", "OneBitLamb", "MuAdam", "MuAdamW", "MuSGD", "Muon"};

std::string lower(std::string s) {
  for (char& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

OptimizerType read_type(Section& s) {
  const Json* v = s.get_raw("type");
  const std::string path = s.path_of("type");
  const std::string accepted = "zerotrain accepts Adam, AdamW, Lamb, Lion and SGD";
  if (!v) fail(path, str("missing; ", accepted));
  if (!v->is_string()) wrong_type(path, str("a string (", accepted, ")"), *v);
  const std::string name = v->get<std::string>();
  for (size_t i = 0; i < kTypes.size(); ++i)
    if (lower(name) == lower(kTypes[i])) return static_cast<OptimizerType>(i);
  for (const std::string& u : kUnsupportedTypes)
    if (lower(name) == lower(u))
      fail(path,
           str("\"", name, "\" is a DeepSpeed optimizer zerotrain does not support; ", accepted));
  std::vector<std::string> all = kTypes;
  all.insert(all.end(), kUnsupportedTypes.begin(), kUnsupportedTypes.end());
  const auto near = nearest_name(name, all);
  fail(path, str("unknown optimizer \"", name, "\"",
                 near ? str("; did you mean \"", *near, "\"?") : "", " (", accepted, ")"));
}

void read_betas(Section& p, double& beta1, double& beta2) {
  const Json* v = p.get_raw("betas");
  if (!v) return;
  if (!v->is_array() || v->size() != 2 || !(*v)[0].is_number() || !(*v)[1].is_number())
    wrong_type(p.path_of("betas"), "two numbers [beta1, beta2]", *v);
  beta1 = (*v)[0].get<double>();
  beta2 = (*v)[1].get<double>();
  if (beta1 < 0 || beta1 >= 1 || beta2 < 0 || beta2 >= 1)
    fail(p.path_of("betas"), str("each beta must be in [0, 1), got ", v->dump()));
}

// DeepSpeed 0.19.6 refuses max_grad_norm among any of its optimizers' params, whatever the value
// (engine.py, _configure_basic_optimizer): clipping is gradient_clipping.
void refuse_max_grad_norm(const Section& p) {
  if (p.peek("max_grad_norm"))
    fail(p.path_of("max_grad_norm"),
         "not an optimizer parameter: use gradient_clipping (DeepSpeed 0.19.6 refuses it too: "
         "\"'max_grad_norm' is not supported as an optimizer parameter\")");
}

AdamParams read_adam(Section& p, bool adamw) {
  AdamParams a;
  a.lr = p.get_double("lr", a.lr, 0.0);
  read_betas(p, a.beta1, a.beta2);
  a.eps = p.get_double("eps", a.eps, 0.0);
  a.weight_decay = p.get_double("weight_decay", a.weight_decay, 0.0);
  // DeepSpeed: AdamW always decouples weight decay; Adam does unless adam_w_mode is false.
  a.adam_w_mode = p.get_bool("adam_w_mode", true) || adamw;
  a.torch_adam = p.get_bool("torch_adam", a.torch_adam);
  a.amsgrad = p.get_bool("amsgrad", a.amsgrad);
  a.bias_correction = p.get_bool("bias_correction", a.bias_correction);
  return a;
}

LambParams read_lamb(Section& p) {
  LambParams l;
  l.lr = p.get_double("lr", l.lr, 0.0);
  read_betas(p, l.beta1, l.beta2);
  l.eps = p.get_double("eps", l.eps, 0.0);
  l.weight_decay = p.get_double("weight_decay", l.weight_decay, 0.0);
  l.bias_correction = p.get_bool("bias_correction", l.bias_correction);
  l.eps_inside_sqrt = p.get_bool("eps_inside_sqrt", l.eps_inside_sqrt);
  l.max_coeff = p.get_double("max_coeff", l.max_coeff, 0.0);
  l.min_coeff = p.get_double("min_coeff", l.min_coeff, 0.0);
  if (l.max_coeff < l.min_coeff)
    fail(p.path_of("max_coeff"),
         str("must be >= min_coeff (", l.min_coeff, "), got ", l.max_coeff));
  // FusedLamb's constructor raises on amsgrad = true.
  if (p.get_bool("amsgrad", false))
    fail(p.path_of("amsgrad"), "FusedLamb has no AMSGrad variant (DeepSpeed refuses it too)");
  return l;
}

LionParams read_lion(Section& p) {
  LionParams l;
  l.lr = p.get_double("lr", l.lr, 0.0);
  read_betas(p, l.beta1, l.beta2);
  l.weight_decay = p.get_double("weight_decay", l.weight_decay, 0.0);
  p.get_bool("set_grad_none", true);  // when zero_grad drops the gradients: no effect here
  return l;
}

SgdParams read_sgd(Section& p) {
  SgdParams g;
  g.lr = p.get_double("lr", g.lr, 0.0);
  g.momentum = p.get_double("momentum", g.momentum, 0.0);
  g.dampening = p.get_double("dampening", g.dampening);
  g.weight_decay = p.get_double("weight_decay", g.weight_decay, 0.0);
  g.nesterov = p.get_bool("nesterov", g.nesterov);
  if (g.nesterov && (g.momentum <= 0 || g.dampening != 0))
    fail(p.path_of("nesterov"), "needs momentum > 0 and dampening 0 (as torch.optim.SGD)");
  if (p.get_bool("maximize", false))
    fail(p.path_of("maximize"), "true (gradient ascent) is not supported by zerotrain");
  // torch's implementation choices: the same update.
  for (const char* key : {"foreach", "fused", "differentiable"})
    p.get_opt_bool(key);
  return g;
}

}  // namespace

void parse_optimizer(Section& s, OptimizerConfig& o) {
  o.type = read_type(s);
  o.legacy_fusion = s.get_bool("legacy_fusion", o.legacy_fusion);
  const Json empty = Json::object();
  const Json* raw = s.get_raw("params");
  Section p(raw ? *raw : empty, s.path_of("params"));
  refuse_max_grad_norm(p);
  switch (o.type) {
    case OptimizerType::adam:
    case OptimizerType::adamw:
      o.params = read_adam(p, o.type == OptimizerType::adamw);
      break;
    case OptimizerType::lamb:
      o.params = read_lamb(p);
      break;
    case OptimizerType::lion:
      o.params = read_lion(p);
      break;
    case OptimizerType::sgd:
      o.params = read_sgd(p);
      break;
  }
  p.finish();
  s.finish();
}

}  // namespace zt::config
