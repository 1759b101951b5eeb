// The flat optimizer (optim/flat_optimizer.h) over loose parameters, one run per parameter, for the
// optimizer tests (tests/optim/test_flat_adam.cpp, test_flat_optimizer.cpp, test_adam_variants.cpp,
// test_flat_adam_low_precision.cpp, test_precision_guard.cpp; tests/train/test_grad_clip.cpp,
// test_train_cuda.cpp): the same FlatOptimizer the ZeRO stages step, handed each parameter's value
// and gradient as a flat run of one piece.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "zerotrain/nn/parameter.h"
#include "zerotrain/optim/flat_optimizer.h"
#include "zerotrain/zero/optimizer_options.h"

namespace zt::test {

// torch.optim.AdamW's defaults.
inline optim::OptimizerConfig torch_adamw() {
  optim::OptimizerConfig c;
  c.beta1 = 0.9;
  c.beta2 = 0.999;
  c.eps = 1e-8;
  c.weight_decay = 0.01;
  return c;
}

struct ParamAdamOptions {
  optim::OptimizerConfig adam = torch_adamw();
  optim::Precision precision = optim::Precision::mixed;
  std::shared_ptr<optim::PrecisionGuard> guard;
  // Which parameters decay; by default the engine's rule (weights only).
  std::function<bool(const nn::Parameter&)> decays = zero::decays;
};

inline std::vector<optim::FlatParam> flat_params(const std::vector<nn::Parameter*>& params,
                                                 const ParamAdamOptions& o) {
  std::vector<optim::FlatParam> out;
  for (const nn::Parameter* p : params)
    out.push_back({p->name, p->shape, p->value.dtype(), o.decays(*p)});
  return out;
}

inline std::vector<optim::FlatRun> flat_runs(const std::vector<nn::Parameter*>& params) {
  std::vector<optim::FlatRun> out;
  for (size_t i = 0; i < params.size(); ++i)
    out.push_back({params[i]->value.flatten(), {{i, 0, params[i]->value.numel(), 0}}});
  return out;
}

class ParamAdam {
 public:
  explicit ParamAdam(std::vector<nn::Parameter*> params, const ParamAdamOptions& o = {},
                     const optim::OptimizerState& initial = {}, Stream stream = {})
      : params_(std::move(params)),
        adam_(flat_params(params_, o), flat_runs(params_), o.adam, o.precision, o.guard, initial,
              stream) {}

  // Steps with each parameter's gradient (undefined ones passed on as undefined).
  void step(float lr, float grad_scale = 1.0f, Stream stream = {}) {
    std::vector<Tensor> grads;
    for (const nn::Parameter* p : params_)
      grads.push_back(p->grad.defined() ? p->grad.flatten() : Tensor());
    adam_.step(grads, lr, grad_scale, stream);
  }
  optim::OptimizerState state() const { return adam_.full_state(); }
  void load_state(const optim::OptimizerState& s, Stream stream = {}) {
    adam_.load_state(s, stream);
  }
  int64_t step_count() const { return adam_.step_count(); }
  optim::FlatOptimizer& adam() { return adam_; }

 private:
  std::vector<nn::Parameter*> params_;
  optim::FlatOptimizer adam_;
};

}  // namespace zt::test
