// The flat Adam (optim/flat_optimizer.h) in the low-precision mode ([Note: precision modes] in
// optim/precision.h), one run per parameter (param_adam.h): bf16 moments and no masters for bf16
// values (full_state() names and dtypes, a third of the mixed mode's bytes), resumes bitwise
// through full_state()/load_state, also from f32 moments, and refuses f16 values. The trainer side:
// tests/train/test_low_precision.cpp.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "optim/param_adam.h"
#include "support/test_util.h"
#include "zerotrain/core/error.h"
#include "zerotrain/optim/precision.h"

namespace zt {
namespace {

struct Model {
  std::vector<std::unique_ptr<nn::Parameter>> params;
  std::vector<nn::Parameter*> ptrs;
  explicit Model(uint64_t seed) {
    const std::pair<const char*, Shape> specs[] = {{"a.weight", {9, 7}}, {"b.bias", {7}}};
    for (const auto& [name, shape] : specs) {
      auto p = std::make_unique<nn::Parameter>();
      p->name = name;
      p->shape = shape;
      p->kind = std::string(name).find("bias") != std::string::npos ? nn::ParamKind::bias
                                                                    : nn::ParamKind::weight;
      p->value = test::random_tensor(shape, DType::bf16, ++seed);
      p->grad = Tensor::zeros(shape, DType::f32);
      ptrs.push_back(p.get());
      params.push_back(std::move(p));
    }
  }
  void set_grads(int step) {
    for (size_t i = 0; i < params.size(); ++i)
      params[i]->grad = test::random_tensor(params[i]->shape, DType::f32, 50 * step + i);
  }
  std::vector<std::vector<float>> values() const {
    std::vector<std::vector<float>> out;
    for (const auto& p : params)
      out.push_back(p->value.to_floats());
    return out;
  }
};

test::ParamAdamOptions low() {
  test::ParamAdamOptions o;
  o.precision = optim::Precision::low;
  return o;
}

TEST(LowPrecision, FlatOptimizerKeepsBf16MomentsAndNoMasters) {
  Model m(1), mixed(1);
  test::ParamAdam opt(m.ptrs, low()), ref(mixed.ptrs);
  m.set_grads(1);
  mixed.set_grads(1);
  opt.step(1e-2f);
  ref.step(1e-2f);
  const optim::OptimizerState st = opt.state();
  EXPECT_EQ(st.tensors.size(), 4u);
  int64_t bytes = 0, ref_bytes = 0;
  for (const auto& [name, t] : st.tensors) {
    EXPECT_EQ(name.find(".master"), std::string::npos) << name;
    EXPECT_EQ(t.dtype(), DType::bf16) << name;
    bytes += static_cast<int64_t>(t.nbytes());
  }
  for (const auto& [name, t] : ref.state().tensors)
    ref_bytes += static_cast<int64_t>(t.nbytes());
  EXPECT_EQ(bytes * 3, ref_bytes);  // 2 bf16 moments vs 2 f32 moments and an f32 master
  EXPECT_NE(m.values(), Model(1).values());
}

TEST(LowPrecision, FlatOptimizerResumesBitwiseFromItsStateAndFromF32Moments) {
  Model a(2), b(2), c(2);
  test::ParamAdam oa(a.ptrs, low());
  for (int step = 1; step <= 2; ++step) {
    a.set_grads(step);
    oa.step(1e-2f);
  }
  optim::OptimizerState saved = oa.state();
  optim::OptimizerState as_f32 = saved;
  for (auto& [name, t] : as_f32.tensors) {
    Tensor f = Tensor::empty(t.shape(), DType::f32);
    f.copy_from(Tensor::from_floats(t.to_floats(), t.shape(), DType::f32));
    t = f;
  }
  for (size_t i = 0; i < a.params.size(); ++i) {
    b.params[i]->value.copy_from(a.params[i]->value);
    c.params[i]->value.copy_from(a.params[i]->value);
  }
  test::ParamAdam ob(b.ptrs, low()), oc(c.ptrs, low());
  ob.load_state(saved);
  oc.load_state(as_f32);
  for (Model* m : {&a, &b, &c})
    m->set_grads(3);
  oa.step(1e-2f);
  ob.step(1e-2f);
  oc.step(1e-2f);
  EXPECT_EQ(b.values(), a.values());
  EXPECT_EQ(c.values(), a.values());
  // A master in a low-precision state is not a tensor of this optimizer.
  saved.tensors.emplace("a.weight.master", Tensor::zeros({9, 7}, DType::f32));
  EXPECT_THROW(ob.load_state(saved), ValueError);
}

TEST(LowPrecision, FlatOptimizerRejectsF16ValuesInLowPrecision) {
  nn::Parameter p{"x.weight",
                  {4},
                  nn::ParamKind::weight,
                  Tensor::zeros({4}, DType::f16),
                  Tensor::zeros({4}, DType::f32)};
  EXPECT_THROW(test::ParamAdam({&p}, low()), DTypeError);
}

}  // namespace
}  // namespace zt
