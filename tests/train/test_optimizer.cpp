// train::AdamW against the float64 reference of torch.optim.AdamW (tests/optim/reference_adamw.h)
// over several steps with a changing lr and grad_scale: the decay / no_decay groups (default and a
// custom rule), f32 parameters stepped in place, f16/bf16 parameters with f32 masters (the value
// always equal to the rounded master), state() naming and sharing, load_state round trips and
// rejections, zero_grad, and argument errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "optim/reference_adamw.h"
#include "support/test_util.h"
#include "train/param_fixture.h"
#include "zerotrain/kernels/cast.h"
#include "zerotrain/train/optimizer.h"

namespace zt {
namespace {

using nn::Parameter;
using nn::ParamKind;
using train::AdamW;
using train::AdamWOptions;

// A small model's worth of parameters: one of each kind, odd sizes.
std::vector<std::unique_ptr<Parameter>> make_params(DType value_dtype, uint64_t seed) {
  const test::ParamSpec specs[] = {{"embed.weight", {11, 5}, ParamKind::embedding, value_dtype},
                                   {"layer.0.proj.weight", {7, 13}, ParamKind::weight, value_dtype},
                                   {"layer.0.proj.bias", {7}, ParamKind::bias, value_dtype},
                                   {"layer.0.norm.weight", {13}, ParamKind::norm, value_dtype},
                                   {"head.weight", {3, 13}, ParamKind::weight, value_dtype}};
  return test::make_params(specs, seed);
}

using test::pointers;

double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v)
    m = std::max(m, std::fabs(x));
  return m;
}

// Runs `steps` optimizer steps with random gradients (dtype grad_dtype) and the same updates on
// float64 references, then compares every master (or f32 value) and both moments, and checks that
// low-precision values are exactly the rounded masters after each step.
void check_against_reference(DType value_dtype, DType grad_dtype, const AdamWOptions& options,
                             const std::vector<bool>& decays) {
  auto params = make_params(value_dtype, 100);
  AdamW opt(pointers(params), options);
  std::vector<test::AdamWState> refs;
  for (const auto& p : params) {
    const size_t n = static_cast<size_t>(p->value.numel());
    refs.push_back(
        {test::to_doubles(p->value), std::vector<double>(n, 0.0), std::vector<double>(n, 0.0)});
  }
  const float lrs[] = {1e-2f, 2e-2f, 3e-2f, 2.5e-2f, 1e-2f, 5e-3f};
  const float scales[] = {1.f, 0.5f, 0.25f, 1.f, 0.125f, 0.75f};
  uint64_t seed = 500;
  for (int step = 1; step <= 6; ++step) {
    SCOPED_TRACE("step " + std::to_string(step));
    for (size_t i = 0; i < params.size(); ++i) {
      Parameter& p = *params[i];
      p.grad = test::random_tensor(p.shape, grad_dtype, ++seed, -2.f, 2.f);
      test::AdamWRefParams hp;
      hp.lr = lrs[step - 1];
      hp.beta1 = options.beta1;
      hp.beta2 = options.beta2;
      hp.eps = options.eps;
      hp.weight_decay = decays[i] ? options.weight_decay : 0.0f;
      hp.step = step;
      hp.grad_scale = scales[step - 1];
      test::adamw_reference_step(refs[i], test::to_doubles(p.grad), hp);
    }
    opt.step(lrs[step - 1], scales[step - 1]);
    EXPECT_EQ(opt.step_count(), step);
    const train::OptimizerState st = opt.state();
    for (size_t i = 0; i < params.size(); ++i) {
      const Parameter& p = *params[i];
      SCOPED_TRACE(p.name);
      const Tensor master = value_dtype == DType::f32 ? p.value : st.tensors.at(p.name + ".master");
      if (value_dtype != DType::f32) {
        ASSERT_EQ(master.dtype(), DType::f32);
        test::expect_bitwise_equal(kernels::cast_to(master, value_dtype), p.value,
                                   "value == round(master)");
      }
      test::expect_close(refs[i].p, master, {1e-6 * max_abs(refs[i].p), 1e-6}, "master");
      test::expect_close(refs[i].m, st.tensors.at(p.name + ".exp_avg"), {1e-7, 1e-6}, "exp_avg");
      test::expect_close(refs[i].v, st.tensors.at(p.name + ".exp_avg_sq"), {1e-12, 1e-6},
                         "exp_avg_sq");
    }
    if (testing::Test::HasFailure()) return;
  }
}

TEST(TrainAdamW, DefaultGroupsDecayOnlyWeights) {
  auto params = make_params(DType::f32, 1);
  AdamWOptions o;
  o.weight_decay = 0.1f;
  AdamW opt(pointers(params), o);
  ASSERT_EQ(opt.groups().size(), 2u);
  EXPECT_EQ(opt.groups()[0].name, "decay");
  EXPECT_FLOAT_EQ(opt.groups()[0].weight_decay, 0.1f);
  EXPECT_EQ(opt.groups()[0].params,
            (std::vector<std::string>{"layer.0.proj.weight", "head.weight"}));
  EXPECT_EQ(opt.groups()[1].name, "no_decay");
  EXPECT_EQ(opt.groups()[1].weight_decay, 0.0f);
  EXPECT_EQ(opt.groups()[1].params,
            (std::vector<std::string>{"embed.weight", "layer.0.proj.bias", "layer.0.norm.weight"}));
}

TEST(TrainAdamW, F32ParamsMatchTorchReferenceWithGroups) {
  AdamWOptions o;
  o.weight_decay = 0.1f;
  o.eps = 1e-6f;
  check_against_reference(DType::f32, DType::f32, o, {false, true, false, false, true});
}

TEST(TrainAdamW, CustomDecayRuleChangesTheGroups) {
  AdamWOptions o;
  o.weight_decay = 0.2f;
  o.beta1 = 0.8f;
  o.beta2 = 0.95f;
  o.decays = train::decay_kinds({ParamKind::weight, ParamKind::embedding});
  auto params = make_params(DType::f32, 1);
  AdamW opt(pointers(params), o);
  EXPECT_EQ(opt.groups()[0].params,
            (std::vector<std::string>{"embed.weight", "layer.0.proj.weight", "head.weight"}));
  check_against_reference(DType::f32, DType::f32, o, {true, true, false, false, true});
}

TEST(TrainAdamW, LowPrecisionParamsStepF32MastersAndRoundIntoValues) {
  AdamWOptions o;
  o.weight_decay = 0.05f;
  for (DType vd : {DType::bf16, DType::f16})
    for (DType gd : {DType::f32, vd}) {
      SCOPED_TRACE(std::string("value ") + std::string(dtype_name(vd)) + ", grad " +
                   std::string(dtype_name(gd)));
      check_against_reference(vd, gd, o, {false, true, false, false, true});
    }
}

TEST(TrainAdamW, MastersStartFromTheValuesAtTheFirstStep) {
  auto params = make_params(DType::bf16, 7);
  AdamW opt(pointers(params));
  EXPECT_TRUE(opt.state().tensors.empty());
  // Values set after construction (a checkpoint load) are what the masters start from.
  params[1]->value = test::random_tensor(params[1]->shape, DType::bf16, 99);
  const std::vector<double> loaded = test::to_doubles(params[1]->value);
  opt.step(0.0f);  // lr 0: the masters stay where they started
  const Tensor master = opt.state().tensors.at("layer.0.proj.weight.master");
  test::expect_close(loaded, master, {0, 0}, "master");
}

TEST(TrainAdamW, StateNamesEveryTensorAndSharesStorage) {
  auto params = make_params(DType::bf16, 3);
  params[4]->value = kernels::cast_to(params[4]->value, DType::f32);  // one f32 parameter
  AdamW opt(pointers(params));
  opt.step(1e-3f);
  const train::OptimizerState st = opt.state();
  EXPECT_EQ(st.step, 1);
  std::vector<std::string> names;
  for (const auto& [name, t] : st.tensors) {
    names.push_back(name);
    EXPECT_EQ(t.dtype(), DType::f32) << name;
  }
  const std::vector<std::string> want = {"embed.weight.exp_avg",
                                         "embed.weight.exp_avg_sq",
                                         "embed.weight.master",
                                         "head.weight.exp_avg",
                                         "head.weight.exp_avg_sq",
                                         "layer.0.norm.weight.exp_avg",
                                         "layer.0.norm.weight.exp_avg_sq",
                                         "layer.0.norm.weight.master",
                                         "layer.0.proj.bias.exp_avg",
                                         "layer.0.proj.bias.exp_avg_sq",
                                         "layer.0.proj.bias.master",
                                         "layer.0.proj.weight.exp_avg",
                                         "layer.0.proj.weight.exp_avg_sq",
                                         "layer.0.proj.weight.master"};
  EXPECT_EQ(names, want);
  EXPECT_EQ(st.tensors.at("head.weight.exp_avg").shape(), (Shape{3, 13}));
  // Views, not copies: the next step shows through.
  const std::vector<float> before = st.tensors.at("embed.weight.exp_avg").to_floats();
  for (auto& p : params)
    p->grad.fill(1.0);
  opt.step(1e-3f);
  EXPECT_NE(st.tensors.at("embed.weight.exp_avg").to_floats(), before);
}

// Two optimizers fed the same gradients: one runs straight through, the other is rebuilt from a
// saved state half way. Their parameters must agree bitwise.
TEST(TrainAdamW, LoadStateResumesBitwise) {
  for (DType vd : {DType::f32, DType::bf16}) {
    SCOPED_TRACE(dtype_name(vd));
    auto a = make_params(vd, 40);
    AdamWOptions o;
    o.weight_decay = 0.1f;
    AdamW opt_a(pointers(a), o);
    auto set_grads = [](std::vector<std::unique_ptr<Parameter>>& ps, uint64_t seed) {
      for (auto& p : ps)
        p->grad = test::random_tensor(p->shape, DType::f32, ++seed);
    };
    for (int s = 0; s < 3; ++s) {
      set_grads(a, 1000 + 10 * s);
      opt_a.step(1e-2f);
    }
    // Save: values and a deep copy of the optimizer state.
    auto b = make_params(vd, 77);  // different start values: load_state must fix the masters
    for (size_t i = 0; i < a.size(); ++i)
      b[i]->value = a[i]->value.clone();
    train::OptimizerState saved = opt_a.state();
    for (auto& [name, t] : saved.tensors)
      t = t.clone();
    AdamW opt_b(pointers(b), o);
    opt_b.load_state(saved);
    EXPECT_EQ(opt_b.step_count(), 3);
    for (int s = 3; s < 6; ++s) {
      set_grads(a, 1000 + 10 * s);
      set_grads(b, 1000 + 10 * s);
      opt_a.step(1e-2f);
      opt_b.step(1e-2f);
    }
    for (size_t i = 0; i < a.size(); ++i)
      test::expect_bitwise_equal(a[i]->value, b[i]->value, a[i]->name);
  }
}

TEST(TrainAdamW, LoadStateCastsMastersIntoValues) {
  auto params = make_params(DType::bf16, 5);
  AdamW opt(pointers(params));
  opt.step(1e-3f);
  train::OptimizerState st = opt.state();
  for (auto& [name, t] : st.tensors)
    t = t.clone();
  Tensor master = test::random_tensor({11, 5}, DType::f32, 123);
  st.tensors["embed.weight.master"] = master;
  opt.load_state(st);
  test::expect_bitwise_equal(kernels::cast_to(master, DType::bf16), params[0]->value, "value");
}

TEST(TrainAdamW, LoadStateRejectsBadStatesAndKeepsItsOwn) {
  auto params = make_params(DType::bf16, 5);
  AdamW opt(pointers(params));
  opt.step(1e-3f);
  auto fresh_copy = [&] {
    train::OptimizerState st = opt.state();
    for (auto& [name, t] : st.tensors)
      t = t.clone();
    return st;
  };
  const std::vector<float> kept = opt.state().tensors.at("head.weight.exp_avg").to_floats();

  train::OptimizerState missing = fresh_copy();
  missing.tensors.erase("head.weight.master");
  EXPECT_THROW(opt.load_state(missing), ValueError);

  train::OptimizerState extra = fresh_copy();
  extra.tensors["head.weight.momentum"] = Tensor::zeros({3, 13}, DType::f32);
  try {
    opt.load_state(extra);
    ADD_FAILURE() << "an unknown tensor was accepted";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("head.weight.momentum"), std::string::npos) << e.what();
  }

  train::OptimizerState misshapen = fresh_copy();
  misshapen.tensors["head.weight.exp_avg"] = Tensor::zeros({13, 3}, DType::f32);
  EXPECT_THROW(opt.load_state(misshapen), ShapeError);

  train::OptimizerState wrong_dtype = fresh_copy();
  wrong_dtype.tensors["head.weight.exp_avg_sq"] = Tensor::zeros({3, 13}, DType::bf16);
  EXPECT_THROW(opt.load_state(wrong_dtype), DTypeError);

  train::OptimizerState negative = fresh_copy();
  negative.step = -1;
  EXPECT_THROW(opt.load_state(negative), ValueError);

  EXPECT_EQ(opt.step_count(), 1);
  EXPECT_EQ(opt.state().tensors.at("head.weight.exp_avg").to_floats(), kept);

  opt.load_state({});
  EXPECT_EQ(opt.step_count(), 0);
  EXPECT_TRUE(opt.state().tensors.empty());
}

TEST(TrainAdamW, ZeroGradClearsEveryGradient) {
  auto params = make_params(DType::f32, 9);
  for (auto& p : params)
    p->grad.fill(3.0);
  AdamW opt(pointers(params));
  opt.zero_grad();
  for (auto& p : params)
    for (float g : p->grad.to_floats())
      ASSERT_EQ(g, 0.0f) << p->name;
}

TEST(TrainAdamW, RejectsBadArguments) {
  auto params = make_params(DType::f32, 9);
  std::vector<Parameter*> ptrs = pointers(params);
  {
    std::vector<Parameter*> twice = {ptrs[0], ptrs[0]};
    EXPECT_THROW(AdamW opt(twice), ValueError);
    std::vector<Parameter*> with_null = {ptrs[0], nullptr};
    EXPECT_THROW(AdamW opt(with_null), ValueError);
    AdamWOptions no_rule;
    no_rule.decays = nullptr;
    EXPECT_THROW(AdamW opt(ptrs, no_rule), ValueError);
    Parameter ints{"ids", {4}, ParamKind::weight, Tensor::zeros({4}, DType::i32), Tensor()};
    std::vector<Parameter*> int_param = {&ints};
    EXPECT_THROW(AdamW opt(int_param), DTypeError);
  }
  AdamW opt(ptrs);
  EXPECT_THROW(opt.step(1e-3f, std::nanf("")), ValueError);
  EXPECT_THROW(opt.step(1e-3f, INFINITY), ValueError);
  EXPECT_THROW(opt.step(-1e-3f), ValueError);
  params[2]->grad = Tensor::zeros({8}, DType::f32);
  EXPECT_THROW(opt.step(1e-3f), ShapeError);
  params[2]->grad = Tensor();
  try {
    opt.step(1e-3f);
    ADD_FAILURE() << "an undefined gradient was accepted";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("layer.0.proj.bias"), std::string::npos) << e.what();
  }
  EXPECT_EQ(opt.step_count(), 0);  // nothing was stepped
  EXPECT_TRUE(opt.state().tensors.empty());
}

}  // namespace
}  // namespace zt
