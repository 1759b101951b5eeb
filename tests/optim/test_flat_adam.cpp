// The flat Adam (optim/flat_optimizer.h), one run per parameter (param_adam.h), against the float64
// reference of torch.optim.AdamW (tests/optim/reference_adamw.h) over several steps with a
// changing lr and grad_scale: the decay / no_decay groups (the engine's default rule and a custom
// one), f32 parameters stepped in place, f16/bf16 parameters with f32 masters (the value always
// equal to the rounded master), full_state() naming and sharing, load_state round trips and
// rejections, the state-slot table, runs cut into several pieces stepping the same bits as whole
// parameters, and argument errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "io/io_test_util.h"
#include "optim/param_adam.h"
#include "optim/reference_adamw.h"
#include "support/test_util.h"
#include "train/param_fixture.h"
#include "zerotrain/kernels/cast.h"
#include "zerotrain/optim/state_slots.h"
#include "zerotrain/zero/optimizer_options.h"

namespace zt {
namespace {

using nn::Parameter;
using nn::ParamKind;

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
void check_against_reference(DType value_dtype, DType grad_dtype,
                             const test::ParamAdamOptions& options,
                             const std::vector<bool>& decays) {
  auto params = make_params(value_dtype, 100);
  test::ParamAdam opt(pointers(params), options);
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
      hp.beta1 = static_cast<float>(options.adam.beta1);
      hp.beta2 = static_cast<float>(options.adam.beta2);
      hp.eps = static_cast<float>(options.adam.eps);
      hp.weight_decay = decays[i] ? static_cast<float>(options.adam.weight_decay) : 0.0f;
      hp.step = step;
      hp.grad_scale = scales[step - 1];
      test::adamw_reference_step(refs[i], test::to_doubles(p.grad), hp);
    }
    opt.step(lrs[step - 1], scales[step - 1]);
    EXPECT_EQ(opt.step_count(), step);
    const optim::OptimizerState st = opt.state();
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

// torch.optim.AdamW's defaults with weight decay 0.1 on the weights.
test::ParamAdamOptions decaying() {
  test::ParamAdamOptions o;
  o.adam.weight_decay = 0.1f;
  return o;
}

// The "decay" and "no_decay" groups, as the flat Adam is given them.
std::pair<std::vector<std::string>, std::vector<std::string>> groups_of(
    const optim::FlatOptimizer& adam) {
  std::pair<std::vector<std::string>, std::vector<std::string>> out;
  for (const optim::FlatParam& p : adam.params())
    (p.decays ? out.first : out.second).push_back(p.name);
  return out;
}

TEST(FlatOptimizer, DefaultGroupsDecayOnlyWeights) {
  auto params = make_params(DType::f32, 1);
  test::ParamAdamOptions o = decaying();
  test::ParamAdam opt(pointers(params), o);
  EXPECT_FLOAT_EQ(static_cast<float>(opt.adam().config().weight_decay), 0.1f);
  const auto [decay, no_decay] = groups_of(opt.adam());
  EXPECT_EQ(decay, (std::vector<std::string>{"layer.0.proj.weight", "head.weight"}));
  EXPECT_EQ(no_decay,
            (std::vector<std::string>{"embed.weight", "layer.0.proj.bias", "layer.0.norm.weight"}));
}

TEST(FlatOptimizer, F32ParamsMatchTorchReferenceWithGroups) {
  test::ParamAdamOptions o = decaying();
  o.adam.eps = 1e-6f;
  check_against_reference(DType::f32, DType::f32, o, {false, true, false, false, true});
}

TEST(FlatOptimizer, CustomDecayRuleChangesTheGroups) {
  test::ParamAdamOptions o;
  o.adam.weight_decay = 0.2f;
  o.adam.beta1 = 0.8f;
  o.adam.beta2 = 0.95f;
  o.decays = [](const Parameter& p) {
    return p.kind == ParamKind::weight || p.kind == ParamKind::embedding;
  };
  auto params = make_params(DType::f32, 1);
  test::ParamAdam opt(pointers(params), o);
  EXPECT_EQ(groups_of(opt.adam()).first,
            (std::vector<std::string>{"embed.weight", "layer.0.proj.weight", "head.weight"}));
  check_against_reference(DType::f32, DType::f32, o, {true, true, false, false, true});
}

TEST(FlatOptimizer, LowPrecisionParamsStepF32MastersAndRoundIntoValues) {
  test::ParamAdamOptions o;
  o.adam.weight_decay = 0.05f;
  for (DType vd : {DType::bf16, DType::f16})
    for (DType gd : {DType::f32, vd}) {
      SCOPED_TRACE(std::string("value ") + std::string(dtype_name(vd)) + ", grad " +
                   std::string(dtype_name(gd)));
      check_against_reference(vd, gd, o, {false, true, false, false, true});
    }
}

TEST(FlatOptimizer, MastersStartFromTheValuesAtConstruction) {
  auto params = make_params(DType::bf16, 7);
  // Values set before construction (a checkpoint load) are what the masters start from.
  params[1]->value = test::random_tensor(params[1]->shape, DType::bf16, 99);
  const std::vector<double> loaded = test::to_doubles(params[1]->value);
  test::ParamAdam opt(pointers(params));
  EXPECT_TRUE(opt.state().tensors.empty());
  opt.step(0.0f);  // lr 0: the masters stay where they started
  const Tensor master = opt.state().tensors.at("layer.0.proj.weight.master");
  test::expect_close(loaded, master, {0, 0}, "master");
}

TEST(FlatOptimizer, StateNamesEveryTensorAndSharesStorage) {
  auto params = make_params(DType::bf16, 3);
  params[4]->value = kernels::cast_to(params[4]->value, DType::f32);  // one f32 parameter
  test::ParamAdam opt(pointers(params));
  opt.step(1e-3f);
  const optim::OptimizerState st = opt.state();
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
TEST(FlatOptimizer, LoadStateResumesBitwise) {
  for (DType vd : {DType::f32, DType::bf16}) {
    SCOPED_TRACE(dtype_name(vd));
    auto a = make_params(vd, 40);
    const test::ParamAdamOptions o = decaying();
    test::ParamAdam opt_a(pointers(a), o);
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
    optim::OptimizerState saved = opt_a.state();
    for (auto& [name, t] : saved.tensors)
      t = t.clone();
    test::ParamAdam opt_b(pointers(b), o);
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

TEST(FlatOptimizer, LoadStateCastsMastersIntoValues) {
  auto params = make_params(DType::bf16, 5);
  test::ParamAdam opt(pointers(params));
  opt.step(1e-3f);
  optim::OptimizerState st = opt.state();
  for (auto& [name, t] : st.tensors)
    t = t.clone();
  Tensor master = test::random_tensor({11, 5}, DType::f32, 123);
  st.tensors["embed.weight.master"] = master;
  opt.load_state(st);
  test::expect_bitwise_equal(kernels::cast_to(master, DType::bf16), params[0]->value, "value");
}

TEST(FlatOptimizer, LoadStateRejectsBadStatesAndKeepsItsOwn) {
  auto params = make_params(DType::bf16, 5);
  test::ParamAdam opt(pointers(params));
  opt.step(1e-3f);
  auto fresh_copy = [&] {
    optim::OptimizerState st = opt.state();
    for (auto& [name, t] : st.tensors)
      t = t.clone();
    return st;
  };
  const std::vector<float> kept = opt.state().tensors.at("head.weight.exp_avg").to_floats();

  optim::OptimizerState missing = fresh_copy();
  missing.tensors.erase("head.weight.master");
  EXPECT_THROW(opt.load_state(missing), ValueError);

  optim::OptimizerState extra = fresh_copy();
  extra.tensors["head.weight.momentum"] = Tensor::zeros({3, 13}, DType::f32);
  try {
    opt.load_state(extra);
    ADD_FAILURE() << "an unknown tensor was accepted";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("head.weight.momentum"), std::string::npos) << e.what();
  }

  optim::OptimizerState misshapen = fresh_copy();
  misshapen.tensors["head.weight.exp_avg"] = Tensor::zeros({13, 3}, DType::f32);
  EXPECT_THROW(opt.load_state(misshapen), ShapeError);

  optim::OptimizerState wrong_dtype = fresh_copy();
  wrong_dtype.tensors["head.weight.exp_avg_sq"] = Tensor::zeros({3, 13}, DType::bf16);
  EXPECT_THROW(opt.load_state(wrong_dtype), DTypeError);

  optim::OptimizerState negative = fresh_copy();
  negative.step = -1;
  EXPECT_THROW(opt.load_state(negative), ValueError);

  EXPECT_EQ(opt.step_count(), 1);
  EXPECT_EQ(opt.state().tensors.at("head.weight.exp_avg").to_floats(), kept);

  opt.load_state({});
  EXPECT_EQ(opt.step_count(), 0);
  EXPECT_TRUE(opt.state().tensors.empty());
}

TEST(FlatOptimizer, RejectsBadArguments) {
  auto params = make_params(DType::f32, 9);
  std::vector<Parameter*> ptrs = pointers(params);
  {
    std::vector<Parameter*> twice = {ptrs[0], ptrs[0]};
    EXPECT_THROW(test::ParamAdam opt(twice), ValueError);
    // A piece outside its parameter or its run.
    std::vector<optim::FlatRun> runs = test::flat_runs(ptrs);
    runs[0].pieces[0].end += 1;
    EXPECT_THROW(optim::FlatOptimizer(test::flat_params(ptrs, {}), runs, test::torch_adamw(),
                                 optim::Precision::mixed, nullptr),
                 ValueError);
    Parameter ints{"ids", {4}, ParamKind::weight, Tensor::zeros({4}, DType::i32), Tensor()};
    std::vector<Parameter*> int_param = {&ints};
    EXPECT_THROW(test::ParamAdam opt(int_param), DTypeError);
  }
  test::ParamAdam opt(ptrs);
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

TEST(FlatOptimizer, StateSlotTableNamesEverySlot) {
  auto kinds = [](DType value, optim::Precision precision, bool amsgrad) {
    std::vector<std::string> out;
    optim::OptimizerConfig adam;
    adam.amsgrad = amsgrad;
    for (const optim::StateSlot& s : optim::state_slots(value, precision, adam))
      out.push_back(std::string(s.suffix) + ":" + std::string(dtype_name(s.dtype)));
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(kinds(DType::f32, optim::Precision::mixed, false),
            (V{".exp_avg:f32", ".exp_avg_sq:f32"}));
  EXPECT_EQ(kinds(DType::bf16, optim::Precision::mixed, true),
            (V{".exp_avg:f32", ".exp_avg_sq:f32", ".max_exp_avg_sq:f32", ".master:f32"}));
  EXPECT_EQ(kinds(DType::f16, optim::Precision::mixed, false),
            (V{".exp_avg:f32", ".exp_avg_sq:f32", ".master:f32"}));
  EXPECT_EQ(kinds(DType::bf16, optim::Precision::low, false),
            (V{".exp_avg:bf16", ".exp_avg_sq:bf16"}));
  EXPECT_EQ(kinds(DType::f32, optim::Precision::low, true),
            (V{".exp_avg:f32", ".exp_avg_sq:f32", ".max_exp_avg_sq:f32"}));
}

// [Note: flat segments]: the same parameters laid back to back in one buffer and cut into two runs
// in the middle of a parameter (as a ZeRO shard boundary cuts them) step to the same bits as one
// run per parameter; a parameter in two pieces has no full_state() (the engine gathers it).
TEST(FlatOptimizer, RunsCutInsideAParameterStepTheSameBits) {
  for (DType vd : {DType::f32, DType::bf16}) {
    SCOPED_TRACE(dtype_name(vd));
    auto a = make_params(vd, 60);
    const test::ParamAdamOptions o = decaying();
    test::ParamAdam whole(pointers(a), o);
    std::vector<Parameter*> ptrs = pointers(a);
    int64_t total = 0;
    for (Parameter* p : ptrs)
      total += p->value.numel();
    Tensor flat_value = Tensor::empty({total}, vd), flat_grad = Tensor::empty({total}, DType::f32);
    const int64_t cut = 60;  // inside layer.0.proj.weight (elements 55-145)
    std::vector<optim::FlatRun> runs(2);
    runs[0].value = flat_value.slice(0, 0, cut);
    runs[1].value = flat_value.slice(0, cut, total);
    int64_t at = 0;
    for (size_t i = 0; i < ptrs.size(); ++i) {
      const int64_t n = ptrs[i]->value.numel();
      flat_value.slice(0, at, at + n).copy_from(ptrs[i]->value.flatten());
      if (at < cut) runs[0].pieces.push_back({i, 0, std::min(n, cut - at), at});
      if (at + n > cut)
        runs[1].pieces.push_back(
            {i, std::max<int64_t>(0, cut - at), n, std::max<int64_t>(0, at - cut)});
      at += n;
    }
    optim::FlatOptimizer split(test::flat_params(ptrs, o), runs, o.adam, o.precision, nullptr);
    for (int s = 0; s < 3; ++s) {
      at = 0;
      for (Parameter* p : ptrs) {
        p->grad =
            test::random_tensor(p->shape, DType::f32, 700 + 10 * s + static_cast<uint64_t>(at));
        flat_grad.slice(0, at, at + p->value.numel()).copy_from(p->grad.flatten());
        at += p->value.numel();
      }
      whole.step(1e-2f, 0.5f);
      const std::vector<Tensor> grads = {flat_grad.slice(0, 0, cut),
                                         flat_grad.slice(0, cut, total)};
      split.step(grads, 1e-2f, 0.5f);
    }
    at = 0;
    for (Parameter* p : ptrs) {
      test::expect_bitwise_equal(p->value.flatten(), flat_value.slice(0, at, at + p->value.numel()),
                                 p->name);
      at += p->value.numel();
    }
    test::expect_error<ValueError>([&] { (void)split.full_state(); },
                                   {"layer.0.proj.weight", "not whole"});
  }
}

}  // namespace
}  // namespace zt
