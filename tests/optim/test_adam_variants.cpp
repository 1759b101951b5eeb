// The flat optimizer's Adam variants (optim::OptimizerConfig: adam_w_mode,
// bias_correction, amsgrad), one run per parameter (param_adam.h): over a few
// steps with a changing lr and grad_scale each equals optim::adam_step applied by hand to flat
// copies of the same values bitwise (f32 values in place, bf16 values through f32 masters) and
// differs from plain AdamW; amsgrad's max_exp_avg_sq is in state(), required by load_state and
// refused with the low-precision mode. The trainer-level runs (resume, ZeRO stages, ds_config) are
// in tests/train/test_trainer_adam_variants.cpp.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "io/io_test_util.h"
#include "optim/param_adam.h"
#include "support/test_util.h"
#include "train/param_fixture.h"
#include "zerotrain/core/error.h"
#include "zerotrain/kernels/cast.h"
#include "zerotrain/optim/optimizers.h"

namespace zt {
namespace {

using nn::Parameter;
using nn::ParamKind;

std::vector<std::unique_ptr<Parameter>> make_params(DType value_dtype) {
  const test::ParamSpec specs[] = {{"embed.weight", {9, 5}, ParamKind::embedding, value_dtype},
                                   {"proj.weight", {7, 11}, ParamKind::weight, value_dtype},
                                   {"proj.bias", {7}, ParamKind::bias, value_dtype}};
  return test::make_params(specs, 20);
}

using test::pointers;

// The by-hand copy of one parameter: flat f32 buffers stepped by optim::adam_step.
struct Flat {
  Tensor master, exp_avg, exp_avg_sq, max_exp_avg_sq;  // [numel] f32
  Tensor value;                                        // [numel] the parameter's dtype
};

const float kLrs[] = {1e-2f, 2e-2f, 3e-2f, 2.5e-2f, 1e-2f};
const float kScales[] = {1.f, 0.5f, 1.f, 0.125f, 0.75f};  // v falls at 0.125: amsgrad shows
constexpr int kSteps = 5;

test::ParamAdamOptions base_options() {
  test::ParamAdamOptions o;
  o.adam.beta1 = 0.8f;
  o.adam.beta2 = 0.9f;
  o.adam.eps = 1e-6f;
  o.adam.weight_decay = 0.1f;
  return o;
}

// Runs kSteps of the flat Adam with `o` and the same steps by hand; expects the values and every
// state tensor bitwise equal. Returns the final values.
std::vector<Tensor> run_and_check(DType value_dtype, const test::ParamAdamOptions& o) {
  auto params = make_params(value_dtype);
  test::ParamAdam opt(pointers(params), o);
  std::vector<Flat> flat;
  for (const auto& p : params) {
    const int64_t n = p->value.numel();
    Flat f;
    f.value = p->value.clone().view({n});
    f.master = kernels::cast_to(f.value, DType::f32);
    f.exp_avg = Tensor::zeros({n}, DType::f32);
    f.exp_avg_sq = Tensor::zeros({n}, DType::f32);
    if (o.adam.amsgrad) f.max_exp_avg_sq = Tensor::zeros({n}, DType::f32);
    flat.push_back(f);
  }
  optim::AdamParams hp;  // set by hand, not through optim::adam_params
  hp.beta1 = static_cast<float>(o.adam.beta1);
  hp.beta2 = static_cast<float>(o.adam.beta2);
  hp.eps = static_cast<float>(o.adam.eps);
  hp.decoupled = o.adam.adam_w_mode;
  hp.bias_correction = o.adam.bias_correction;
  hp.amsgrad = o.adam.amsgrad;
  uint64_t seed = 300;
  for (int step = 1; step <= kSteps; ++step) {
    hp.lr = kLrs[step - 1];
    std::vector<optim::AdamSegment> runs;
    for (size_t i = 0; i < params.size(); ++i) {
      Parameter& p = *params[i];
      p.grad = test::random_tensor(p.shape, DType::f32, ++seed, -2.f, 2.f);
      optim::AdamSegment r;
      r.master = static_cast<float*>(flat[i].master.data());
      r.exp_avg = static_cast<float*>(flat[i].exp_avg.data());
      r.exp_avg_sq = static_cast<float*>(flat[i].exp_avg_sq.data());
      r.max_exp_avg_sq =
          o.adam.amsgrad ? static_cast<float*>(flat[i].max_exp_avg_sq.data()) : nullptr;
      r.grad = p.grad.data();
      r.grad_dtype = DType::f32;
      r.param_copy = value_dtype == DType::f32 ? nullptr : flat[i].value.data();
      r.param_dtype = value_dtype;
      r.n = p.value.numel();
      r.weight_decay = p.kind == ParamKind::weight ? static_cast<float>(o.adam.weight_decay) : 0.0f;
      runs.push_back(r);
    }
    optim::adam_step(runs, hp, {step, kScales[step - 1]});
    opt.step(kLrs[step - 1], kScales[step - 1]);
  }
  const optim::OptimizerState st = opt.state();
  std::vector<Tensor> values;
  for (size_t i = 0; i < params.size(); ++i) {
    const Parameter& p = *params[i];
    const int64_t n = p.value.numel();
    SCOPED_TRACE(p.name);
    const Tensor value = p.value.view({n});
    test::expect_bitwise_equal(value_dtype == DType::f32 ? flat[i].master : flat[i].value, value,
                               "value");
    if (value_dtype != DType::f32)
      test::expect_bitwise_equal(flat[i].master, st.tensors.at(p.name + ".master").view({n}),
                                 "master");
    test::expect_bitwise_equal(flat[i].exp_avg, st.tensors.at(p.name + ".exp_avg").view({n}),
                               "exp_avg");
    test::expect_bitwise_equal(flat[i].exp_avg_sq, st.tensors.at(p.name + ".exp_avg_sq").view({n}),
                               "exp_avg_sq");
    EXPECT_EQ(st.tensors.count(p.name + ".max_exp_avg_sq"), o.adam.amsgrad ? 1u : 0u);
    if (o.adam.amsgrad)
      test::expect_bitwise_equal(flat[i].max_exp_avg_sq,
                                 st.tensors.at(p.name + ".max_exp_avg_sq").view({n}),
                                 "max_exp_avg_sq");
    values.push_back(p.value.clone());
  }
  return values;
}

bool same_bits(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].to_floats() != b[i].to_floats()) return false;
  return true;
}

TEST(AdamVariants, EachVariantIsTheHandStepAndDiffersFromAdamW) {
  struct Variant {
    const char* name;
    bool decoupled, bias_correction, amsgrad;
  };
  const Variant variants[] = {{"l2", false, true, false},
                              {"no_bias_correction", true, false, false},
                              {"amsgrad", true, true, true},
                              {"l2_amsgrad_no_bias_correction", false, false, true}};
  for (DType dtype : {DType::f32, DType::bf16}) {
    SCOPED_TRACE(dtype_name(dtype));
    const std::vector<Tensor> plain = run_and_check(dtype, base_options());
    for (const Variant& v : variants) {
      SCOPED_TRACE(v.name);
      test::ParamAdamOptions o = base_options();
      o.adam.adam_w_mode = v.decoupled;
      o.adam.bias_correction = v.bias_correction;
      o.adam.amsgrad = v.amsgrad;
      EXPECT_FALSE(same_bits(run_and_check(dtype, o), plain)) << "the option changed nothing";
    }
  }
}

TEST(AdamVariants, AdamParamsCarriesTheVariant) {
  test::ParamAdamOptions o = base_options();
  o.adam.adam_w_mode = false;
  o.adam.bias_correction = false;
  o.adam.amsgrad = true;
  const optim::AdamParams hp = optim::adam_params(o.adam, 0.25f);
  EXPECT_EQ(hp.lr, 0.25f);
  EXPECT_FALSE(hp.decoupled);
  EXPECT_FALSE(hp.bias_correction);
  EXPECT_TRUE(hp.amsgrad);
  EXPECT_EQ(hp.beta1, 0.8f);
  EXPECT_EQ(hp.beta2, 0.9f);
  EXPECT_EQ(hp.eps, 1e-6f);
  const optim::AdamParams plain = optim::adam_params(base_options().adam, 0.25f);
  EXPECT_TRUE(plain.decoupled);
  EXPECT_TRUE(plain.bias_correction);
  EXPECT_FALSE(plain.amsgrad);
}

TEST(AdamVariants, AmsgradStateIsSavedRequiredAndRestored) {
  test::ParamAdamOptions o = base_options();
  o.adam.amsgrad = true;
  auto params = make_params(DType::bf16);
  test::ParamAdam opt(pointers(params), o);
  const float scales[] = {1.0f, 0.125f};  // v falls below its running max at the second step
  for (int step = 1; step <= 2; ++step) {
    for (auto& p : params)
      p->grad = test::random_tensor(p->shape, DType::f32, 40 + step);
    opt.step(1e-2f, scales[step - 1]);
  }
  optim::OptimizerState st = opt.state();
  EXPECT_EQ(st.tensors.size(), 3u * 4u);  // exp_avg, exp_avg_sq, max_exp_avg_sq, master
  const std::vector<float> v = st.tensors.at("proj.weight.exp_avg_sq").to_floats();
  const std::vector<float> vmax = st.tensors.at("proj.weight.max_exp_avg_sq").to_floats();
  bool above = false;
  for (size_t i = 0; i < v.size(); ++i) {
    ASSERT_GE(vmax[i], v[i]) << i;
    above = above || vmax[i] > v[i];
  }
  EXPECT_TRUE(above) << "v never fell below its running max";
  for (auto& [name, t] : st.tensors)
    t = t.clone();

  // A state without the max (a plain AdamW checkpoint) is refused, naming the tensor.
  auto other = make_params(DType::bf16);
  test::ParamAdam fresh(pointers(other), o);
  optim::OptimizerState missing = st;
  missing.tensors.erase("proj.bias.max_exp_avg_sq");
  test::expect_error<ValueError>([&] { fresh.load_state(missing); },
                                 {"proj.bias.max_exp_avg_sq", "missing"});
  // And one with it is refused by a plain AdamW.
  test::ParamAdam plain(pointers(other), base_options());
  test::expect_error<ValueError>([&] { plain.load_state(st); },
                                 {"max_exp_avg_sq", "not a state tensor"});

  fresh.load_state(st);
  const optim::OptimizerState back = fresh.state();
  test::expect_bitwise_equal(st.tensors.at("proj.weight.max_exp_avg_sq"),
                             back.tensors.at("proj.weight.max_exp_avg_sq"), "max_exp_avg_sq");
  test::expect_bitwise_equal(kernels::cast_to(st.tensors.at("embed.weight.master"), DType::bf16),
                             other[0]->value, "value == round(master)");
}

TEST(AdamVariants, AmsgradIsRefusedInLowPrecision) {
  test::ParamAdamOptions o;
  o.adam.amsgrad = true;
  o.precision = optim::Precision::low;
  auto params = make_params(DType::bf16);
  test::expect_error<ValueError>([&] { test::ParamAdam opt(pointers(params), o); },
                                 {"embed.weight", "amsgrad", "low precision"});
  // f32 values keep f32 moments in low precision too: amsgrad is fine there.
  auto f32 = make_params(DType::f32);
  test::ParamAdam opt(pointers(f32), o);
  opt.step(1e-3f);
  EXPECT_EQ(opt.state().tensors.count("proj.weight.max_exp_avg_sq"), 1u);
}

}  // namespace
}  // namespace zt
