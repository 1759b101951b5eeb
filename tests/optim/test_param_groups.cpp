// Weight-decay groups of optim/param_groups.h: HF's default (weights only), configured kinds and
// names, and bad policies.
#include <gtest/gtest.h>

#include "zerotrain/core/error.h"
#include "zerotrain/optim/param_groups.h"

namespace zt {
namespace {

nn::Parameter param(const std::string& name, nn::ParamKind kind) {
  nn::Parameter p;
  p.name = name;
  p.kind = kind;
  return p;
}

TEST(OptimParamGroups, ByDefaultOnlyWeightsDecay) {
  optim::WeightDecayPolicy policy;
  policy.weight_decay = 0.1f;
  EXPECT_EQ(optim::weight_decay_for(
                param("model.layers.0.mlp.up_proj.weight", nn::ParamKind::weight), policy),
            0.1f);
  EXPECT_EQ(optim::weight_decay_for(
                param("model.layers.0.input_layernorm.weight", nn::ParamKind::norm), policy),
            0.0f);
  EXPECT_EQ(optim::weight_decay_for(param("transformer.h.0.attn.c_attn.bias", nn::ParamKind::bias),
                                    policy),
            0.0f);
  EXPECT_EQ(
      optim::weight_decay_for(param("model.embed_tokens.weight", nn::ParamKind::embedding), policy),
      0.0f);
}

TEST(OptimParamGroups, PolicyFromJsonChangesKindsAndNames) {
  const auto policy = optim::parse_weight_decay_policy({{"weight_decay", 0.05},
                                                        {"decay_kinds", {"weight", "embedding"}},
                                                        {"no_decay_names", {"lm_head"}}});
  EXPECT_EQ(
      optim::weight_decay_for(param("model.embed_tokens.weight", nn::ParamKind::embedding), policy),
      0.05f);
  EXPECT_EQ(optim::weight_decay_for(param("lm_head.weight", nn::ParamKind::weight), policy), 0.0f);
  EXPECT_EQ(optim::weight_decay_for(param("model.norm.weight", nn::ParamKind::norm), policy), 0.0f);
}

TEST(OptimParamGroups, BadPoliciesNameTheKey) {
  EXPECT_THROW(optim::parse_weight_decay_policy({{"weight_decay", -1}}), ValueError);
  EXPECT_THROW(optim::parse_weight_decay_policy({{"decay_kinds", {"conv"}}}), ValueError);
  EXPECT_THROW(optim::parse_weight_decay_policy({{"no_decay_names", {""}}}), ValueError);
  EXPECT_THROW(optim::parse_weight_decay_policy({{"decay", 0.1}}), ValueError);
  EXPECT_THROW(optim::parse_weight_decay_policy(nlohmann::json::array()), ValueError);
}

}  // namespace
}  // namespace zt
