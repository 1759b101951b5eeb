// The toy block of experts of expert_toy.h.
#include "nn/expert_toy.h"

#include <utility>
#include <vector>

#include "zerotrain/core/error.h"

namespace zt::test {
namespace {

nn::Parameter param(const std::string& name, Shape shape, nn::ParamKind kind) {
  nn::Parameter p;
  p.name = name;
  p.shape = std::move(shape);
  p.kind = kind;
  return p;
}

// y = x * w, w [C] over the columns of x [N, C].
class ScaleExpert : public nn::Sublayer {
 public:
  ScaleExpert(const std::string& prefix, int64_t hidden)
      : w_(param(prefix + ".weight", {hidden}, nn::ParamKind::weight)) {}
  Tensor forward(const Tensor& x, nn::TokenDims, Stream) override {
    x_ = x.to_floats();
    const std::vector<float> w = w_.value.to_floats();
    std::vector<float> y(x_.size());
    for (size_t i = 0; i < y.size(); ++i)
      y[i] = x_[i] * w[i % w.size()];
    return Tensor::from_floats(y, x.shape(), DType::f32);
  }
  Tensor backward(const Tensor& dy, Stream) override {
    const std::vector<float> d = dy.to_floats(), w = w_.value.to_floats();
    float* g = w_.grad.data_as<float>();
    std::vector<float> dx(d.size());
    for (size_t i = 0; i < d.size(); ++i) {
      g[i % w.size()] += d[i] * x_[i];
      dx[i] = d[i] * w[i % w.size()];
    }
    x_.clear();
    return Tensor::from_floats(dx, dy.shape(), DType::f32);
  }
  void release() override { x_.clear(); }
  void append_parameters(std::vector<nn::Parameter*>& out) override { out.push_back(&w_); }

 private:
  nn::Parameter w_;
  std::vector<float> x_;  // [N * C] the last forward's input
};

class ToyExperts : public nn::ExpertBlock {
 public:
  ToyExperts(const std::string& name, std::vector<std::unique_ptr<nn::Sublayer>> experts,
             int64_t hidden)
      : ExpertBlock(std::move(experts)),
        name_(name),
        gate_(param(name + ".mlp.gate.weight", {num_experts(), hidden}, nn::ParamKind::weight)),
        norm_(param(name + ".norm.weight", {hidden}, nn::ParamKind::norm)) {}
  std::string name() const override { return name_; }
  std::vector<nn::Parameter*> parameters() override {
    std::vector<nn::Parameter*> out{&norm_, &gate_};
    append_expert_parameters(out);
    return out;
  }
  Tensor forward(const Tensor& x, const nn::StepContext&) override {
    std::vector<float> y = x.to_floats();
    const nn::TokenDims dims{1, x.size(0), {}};
    for (int64_t e = 0; e < num_experts(); ++e) {
      const std::vector<float> ye = expert(e).forward(x, dims, {}).to_floats();
      for (size_t i = 0; i < y.size(); ++i)
        y[i] += ye[i];
    }
    return Tensor::from_floats(y, x.shape(), DType::f32);
  }
  Tensor backward(const Tensor& dy, const nn::StepContext&) override {
    std::vector<float> dx = dy.to_floats();
    for (int64_t e = 0; e < num_experts(); ++e) {
      const std::vector<float> de = expert(e).backward(dy, {}).to_floats();
      for (size_t i = 0; i < dx.size(); ++i)
        dx[i] += de[i];
    }
    return Tensor::from_floats(dx, dy.shape(), DType::f32);
  }
  void release_saved() override {
    for (int64_t e = 0; e < num_experts(); ++e)
      expert(e).release();
  }

 private:
  std::string name_;
  nn::Parameter gate_;  // [E, C] the router's logits weight (unused: no routing here)
  nn::Parameter norm_;  // [C] (unused)
};

}  // namespace

std::unique_ptr<nn::Sublayer> make_scale_expert(const std::string& prefix, int64_t hidden) {
  return std::make_unique<ScaleExpert>(prefix, hidden);
}

std::unique_ptr<nn::ExpertBlock> make_expert_toy(const std::string& name, int64_t experts,
                                                 int64_t hidden) {
  std::vector<std::unique_ptr<nn::Sublayer>> list;
  for (int64_t e = 0; e < experts; ++e)
    list.push_back(make_scale_expert(name + ".mlp.experts." + std::to_string(e), hidden));
  return std::make_unique<ToyExperts>(name, std::move(list), hidden);
}

}  // namespace zt::test
