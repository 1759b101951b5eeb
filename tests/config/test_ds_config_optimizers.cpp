// The optimizer section's params for Lamb, Lion and SGD as their constructors take them (FusedLamb,
// FusedLion, torch.optim.SGD): the defaults, the settings zerotrain reads (Lamb's eps_inside_sqrt
// and coefficients, Lion's betas, SGD's momentum, dampening, nesterov), the keyword arguments that
// change nothing (FusedLion's set_grad_none, SGD's foreach / fused / differentiable), and what is
// refused in one line: a key no constructor takes, FusedLamb's amsgrad, SGD's maximize, inverted
// trust-ratio bounds, and DeepSpeed's optimizers zerotrain does not have, by name; the warning for
// Lamb and SGD under ZeRO, which DeepSpeed runs only with zero_allow_untested_optimizer.
#include <gtest/gtest.h>

#include <string>
#include <variant>
#include <vector>

#include "zerotrain/config/load.h"
#include "zerotrain/core/error.h"

namespace zt::config {
namespace {

OptimizerConfig optimizer_of(const std::string& section) {
  const LoadedConfig l =
      parse_ds_config(R"({"train_batch_size": 4, "optimizer": )" + section + "}", "t");
  EXPECT_TRUE(l.config.optimizer.has_value());
  return *l.config.optimizer;
}

std::string error_of(const std::string& section) {
  try {
    parse_ds_config(R"({"train_batch_size": 4, "optimizer": )" + section + "}", "t");
  } catch (const ValueError& e) {
    return e.what();
  }
  return "";
}

TEST(DsConfigOptimizers, LambReadsFusedLambsArguments) {
  const OptimizerConfig o = optimizer_of(R"({"type": "Lamb", "params": {"lr": 0.002,
      "eps_inside_sqrt": true, "max_coeff": 0.3, "min_coeff": 0.01, "amsgrad": false}})");
  ASSERT_EQ(o.type, OptimizerType::lamb);
  const auto& l = std::get<LambParams>(o.params);
  EXPECT_TRUE(l.eps_inside_sqrt);
  EXPECT_DOUBLE_EQ(l.max_coeff, 0.3);
  EXPECT_DOUBLE_EQ(l.min_coeff, 0.01);
  EXPECT_DOUBLE_EQ(l.beta2, 0.999);
  const auto defaults = std::get<LambParams>(optimizer_of(R"({"type": "lamb"})").params);
  EXPECT_FALSE(defaults.eps_inside_sqrt);
  EXPECT_DOUBLE_EQ(defaults.max_coeff, 10.0);
  EXPECT_TRUE(defaults.bias_correction);
}

TEST(DsConfigOptimizers, LionDefaultsToFusedLionsBetas) {
  const auto l = std::get<LionParams>(
      optimizer_of(R"({"type": "Lion", "params": {"set_grad_none": false}})").params);
  EXPECT_DOUBLE_EQ(l.beta1, 0.9);
  EXPECT_DOUBLE_EQ(l.beta2, 0.999);
  EXPECT_DOUBLE_EQ(l.lr, 1e-3);
}

TEST(DsConfigOptimizers, SgdReadsTorchsArguments) {
  const auto g = std::get<SgdParams>(optimizer_of(R"({"type": "SGD", "params": {"lr": 0.1,
      "momentum": 0.9, "dampening": 0, "nesterov": true, "weight_decay": 1e-4,
      "maximize": false, "foreach": null, "fused": false, "differentiable": false}})")
                                          .params);
  EXPECT_DOUBLE_EQ(g.momentum, 0.9);
  EXPECT_TRUE(g.nesterov);
  EXPECT_DOUBLE_EQ(g.weight_decay, 1e-4);
}

TEST(DsConfigOptimizers, RefusesInOneLineNamingTheKey) {
  const auto expect = [](const std::string& section, const std::string& part) {
    const std::string e = error_of(section);
    EXPECT_NE(e.find(part), std::string::npos) << section << " -> " << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  };
  expect(R"({"type": "Lion", "params": {"eps": 1e-8}})", "optimizer.params.eps: unknown key");
  expect(R"({"type": "Lamb", "params": {"amsgrad": true}})",
         "optimizer.params.amsgrad: FusedLamb has no AMSGrad variant");
  expect(R"({"type": "Lamb", "params": {"max_coeff": 0.01, "min_coeff": 0.3}})",
         "optimizer.params.max_coeff: must be >= min_coeff");
  expect(R"({"type": "SGD", "params": {"maximize": true}})", "optimizer.params.maximize");
  expect(R"({"type": "SGD", "params": {"momentum": 0.9, "dampening": 0.1, "nesterov": true}})",
         "optimizer.params.nesterov: needs momentum > 0 and dampening 0");
  for (const char* name : {"OneBitAdam", "ZeroOneAdam", "OneBitLamb", "Adagrad", "Muon"})
    expect(str(R"({"type": ")", name, R"("})"),
           str("optimizer.type: \"", name, "\" is a DeepSpeed optimizer zerotrain does not "
                                          "support"));
}

// DeepSpeed refuses Lamb and SGD under ZeRO without zero_allow_untested_optimizer; zerotrain
// runs them and says so (Lamb's trust ratio also differs from DeepSpeed's ZeRO: per parameter).
TEST(DsConfigOptimizers, UntestedOptimizerUnderZeroWarns) {
  const auto warnings_of = [](const std::string& body) {
    return parse_ds_config(R"({"train_batch_size": 4, )" + body + "}", "t").warnings;
  };
  const auto has = [](const std::vector<std::string>& ws, const std::string& part) {
    for (const std::string& w : ws)
      if (w.find(part) != std::string::npos) return true;
    return false;
  };
  const auto sgd =
      warnings_of(R"("optimizer": {"type": "SGD"}, "zero_optimization": {"stage": 2})");
  EXPECT_TRUE(has(sgd, "[config] optimizer.type SGD at ZeRO stage 2: DeepSpeed 0.19.6 refuses "
                       "this optimizer under ZeRO unless zero_allow_untested_optimizer is true"));
  const auto lamb = warnings_of(R"("optimizer": {"type": "Lamb"}, "zero_optimization": {"stage": 1},
                                   "zero_allow_untested_optimizer": true)");
  EXPECT_TRUE(has(lamb, "trust ratio per parameter"));
  EXPECT_FALSE(has(lamb, "refuses"));
  const auto lion =
      warnings_of(R"("optimizer": {"type": "Lion"}, "zero_optimization": {"stage": 3})");
  EXPECT_FALSE(has(lion, "optimizer.type"));
  EXPECT_FALSE(has(warnings_of(R"("optimizer": {"type": "Lamb"})"), "optimizer.type"));
}

}  // namespace
}  // namespace zt::config
