// config/zero_key_table.h: one row per key `config check` prints under zero_optimization (and no
// other), each with a usage text; the flag rows' help and agreement fields; the stage's one check;
// and optim::rule_of, which takes the optimizer section's rule.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "zerotrain/config/load.h"
#include "zerotrain/config/zero_key_table.h"
#include "zerotrain/core/error.h"
#include "zerotrain/optim/optimizer_config.h"

namespace zt::config {
namespace {

void printed_keys(const nlohmann::json& node, const std::string& path, std::set<std::string>& out) {
  for (const auto& [key, value] : node.items()) {
    const std::string p = path.empty() ? key : path + "." + key;
    if (value.is_object()) printed_keys(value, p, out);
    out.insert(p);
  }
}

TEST(ZeroKeyTable, OneRowPerPrintedKey) {
  DsConfig c;
  c.zero_optimization.offload_param.emplace();
  c.zero_optimization.offload_optimizer.emplace();
  const nlohmann::json zero = nlohmann::json::parse(ds_config_json(c))["zero_optimization"];
  std::set<std::string> printed;
  printed_keys(zero, "", printed);
  std::set<std::string> rows;
  for (const ZeroKey& k : zero_key_table())
    EXPECT_TRUE(rows.insert(std::string(k.path)).second);
  EXPECT_EQ(rows, printed);
  EXPECT_EQ(rows.size(), 53u);
}

TEST(ZeroKeyTable, EveryKeyHasAUsageUnderEitherSpelling) {
  for (const ZeroKey& k : zero_key_table()) {
    if (zero_key_is_section(k)) {
      EXPECT_FALSE(zero_key_usage(k.path).has_value()) << k.path;
      EXPECT_TRUE(zero_key_usage(str(k.path, ".not_a_key")).has_value()) << k.path;
      continue;
    }
    ASSERT_TRUE(zero_key_usage(k.path).has_value()) << k.path;
    EXPECT_FALSE(zero_key_usage(k.path)->empty()) << k.path;
    if (const std::string_view alias = zero_key_alias(k); !alias.empty()) {
      EXPECT_EQ(zero_key_usage(alias), zero_key_usage(k.path)) << alias;
      EXPECT_EQ(zero_key_printed_path(alias), k.path);
    }
  }
  EXPECT_FALSE(zero_key_usage("zenflow").has_value());  // unsupported: key_table.h explains it
}

TEST(ZeroKeyTable, FlagRowsHaveHelpAndTheAgreedFlagsAValue) {
  for (const ZeroKey& k : zero_key_table())
    EXPECT_EQ(k.flag.empty(), k.help.empty()) << k.path;
  std::vector<std::string> flags;
  for (const ZeroKey* k : zero_flag_keys()) {
    EXPECT_NE(k->given, nullptr) << k->path;
    flags.push_back(std::string(k->flag));
  }
  EXPECT_EQ(flags, (std::vector<std::string>{"--zero-stage", "--reduce-bucket-size",
                                             "--stage3-persistence-threshold",
                                             "--stage3-prefetch-bucket-size",
                                             "--stage3-max-live-parameters", "--sub-group-size"}));
  EXPECT_THROW(zero_key("no_such_key"), std::logic_error);
}

std::string stage_refusal(int64_t stage, StageWording wording) {
  try {
    check_zero_stage(stage, "config", "zero_optimization.stage", wording);
  } catch (const ValueError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(ZeroKeyTable, StageHasOneCheck) {
  for (int64_t s : {0, 1, 2, 3})
    EXPECT_EQ(stage_refusal(s, StageWording::must_be), "accepted");
  EXPECT_EQ(stage_refusal(4, StageWording::must_be),
            "[config] zero_optimization.stage: must be 0, 1, 2 or 3, got 4");
  EXPECT_EQ(stage_refusal(-1, StageWording::expected),
            "[config] zero_optimization.stage: expected 0, 1, 2 or 3, got -1");
  // The parser reads the row's int64 before it narrows to the field: 2^32 + 1 is refused, not 1.
  try {
    parse_ds_config(R"({"train_batch_size": 1, "zero_optimization": {"stage": 4294967297}})",
                    "test");
    ADD_FAILURE() << "accepted";
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(),
                 "[config] zero_optimization.stage: expected 0, 1, 2 or 3, got 4294967297");
  }
}

TEST(RuleOf, TakesTheSectionsRuleAndKeepsTheRest) {
  optim::OptimizerConfig base;
  base.eps = 1e-6;
  base.amsgrad = true;
  OptimizerConfig sgd{OptimizerType::sgd, SgdParams{.momentum = 0.9, .nesterov = true}};
  const optim::OptimizerConfig s = optim::rule_of(sgd, base);
  EXPECT_EQ(s.kind, optim::OptimizerKind::sgd);
  EXPECT_EQ(s.momentum, 0.9);
  EXPECT_TRUE(s.nesterov);
  EXPECT_EQ(s.eps, 1e-6);  // SGD has no eps: base's
  EXPECT_EQ(s.beta2, base.beta2);
  EXPECT_FALSE(s.amsgrad);
  OptimizerConfig adam{OptimizerType::adam, AdamParams{.adam_w_mode = false, .amsgrad = true}};
  const optim::OptimizerConfig a = optim::rule_of(adam, base);
  EXPECT_EQ(a.kind, optim::OptimizerKind::adam);
  EXPECT_FALSE(a.adam_w_mode);
  EXPECT_TRUE(a.amsgrad);
  EXPECT_EQ(a.eps, 1e-8);  // AdamParams' default
  EXPECT_TRUE(optim::has_betas(optim::OptimizerKind::lion));
  EXPECT_FALSE(optim::has_eps(optim::OptimizerKind::lion));
}

}  // namespace
}  // namespace zt::config
