// The per-family config.json rules (FamilyTraits::config_json, nn/family_<name>.cpp): every
// registered family has them, and each family's config written from a model reads back as the
// same model.
#include <gtest/gtest.h>

#include "nn/nn_test_util.h"
#include "zerotrain/io/hf_config.h"
#include "zerotrain/nn/family_registry.h"

namespace zt::io {
namespace {

TEST(HfConfigFamilies, EveryRegisteredFamilyHasRules) {
  for (const nn::FamilyTraits* f : nn::all_families()) {
    EXPECT_NE(f->config_json.read, nullptr) << f->name;
    EXPECT_NE(f->config_json.write, nullptr) << f->name;
    EXPECT_NE(f->config_json.keys.hidden, nullptr) << f->name;
  }
}

TEST(HfConfigFamilies, EachFamilyReadsBackWhatItWrites) {
  for (const nn::FamilyTraits* f : nn::all_families()) {
    nn::ModelConfig c = test::tiny_config(f->family);
    // The biases qwen2 (q/k/v) and gpt2 (all) always have: the reader sets the flags to say so.
    if (f->family == nn::Family::qwen2) c.attention_bias = true;
    if (f->family == nn::Family::gpt2) c.attention_bias = c.mlp_bias = true;
    const nn::ModelConfig back = parse_hf_config(hf_config_json(c));
    EXPECT_TRUE(config_differences(c, back).empty()) << f->name;
    EXPECT_EQ(back.family, f->family);
  }
}

}  // namespace
}  // namespace zt::io
