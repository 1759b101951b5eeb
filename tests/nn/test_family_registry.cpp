// The family registry (nn/family_registry.h) and each family's traits (nn/family_<name>.cpp):
// lookups by family and model_type, and that every built model's parameter names are the ones its
// traits promise (prefix, input embedding, layers, final norm); the sublayers of each family's
// kinds carry the names they are given.
#include <gtest/gtest.h>

#include <string>

#include "nn/nn_test_util.h"
#include "zerotrain/nn/cached_attention.h"
#include "zerotrain/nn/family_registry.h"
#include "zerotrain/nn/layer_parts.h"
#include "zerotrain/nn/transformer.h"

namespace zt {
namespace {

using nn::Family;
using nn::FamilyTraits;

TEST(NnFamilyRegistry, ListsEveryFamilyOnceInOrder) {
  EXPECT_EQ(nn::family_names(), "llama, mistral, qwen2, gpt2");
  for (const FamilyTraits* f : nn::all_families()) {
    EXPECT_EQ(&nn::family_traits(f->family), f) << f->name;
    EXPECT_EQ(nn::find_family(f->name), f) << f->name;
    EXPECT_EQ(nn::family_name(f->family), f->name);
  }
  EXPECT_EQ(nn::find_family("bert"), nullptr);
  EXPECT_EQ(nn::find_family("Llama"), nullptr);
  EXPECT_EQ(nn::find_family(""), nullptr);
}

TEST(NnFamilyRegistry, ParameterNamesFollowTheTraits) {
  for (const FamilyTraits* f : nn::all_families()) {
    const nn::ModelConfig c = test::tiny_config(f->family);
    nn::Transformer m(c, {.allocate = false});
    const std::string prefix = f->hf.base_prefix;
    for (const nn::Parameter* p : m.parameters())
      EXPECT_TRUE(p->name.starts_with(prefix) || p->name == "lm_head.weight")
          << f->name << ": " << p->name;
    EXPECT_EQ(m.parameters().front()->name, std::string(f->hf.embed_tokens) + ".weight");
    EXPECT_NE(m.find(std::string(f->hf.layer_prefix) + "0" + f->hf.input_norm + ".weight"), nullptr)
        << f->name;
    EXPECT_NE(m.find(std::string(f->hf.final_norm) + ".weight"), nullptr) << f->name;
    const bool positions = *f->hf.positions != '\0';
    EXPECT_EQ(positions, f->architecture(c).learned_positions) << f->name;
    if (positions) {
      EXPECT_NE(m.find(std::string(f->hf.positions) + ".weight"), nullptr) << f->name;
    }
  }
}

// The sublayers of the kinds each family's Architecture names (nn/layer_parts.h): every
// parameter under the prefix given, and generation's cached attention of the same kind with the
// same names and shapes (it is pointed at the training model's values).
TEST(NnFamilyRegistry, LayerPartsAreTheFamilysKindsUnderTheirNames) {
  for (const FamilyTraits* f : nn::all_families()) {
    const nn::ModelConfig c = test::tiny_config(f->family);
    const std::string attn = "layers.7.attn", mlp = "layers.7.mlp";
    std::vector<nn::Parameter*> trained, cached, mlp_params;
    const auto attention = nn::make_attention(attn, c);
    const auto cached_attention = nn::make_cached_attention(attn, c);
    const auto mlp_layer = nn::make_mlp(mlp, c);
    attention->append_parameters(trained);
    cached_attention->append_parameters(cached);
    mlp_layer->append_parameters(mlp_params);
    ASSERT_FALSE(trained.empty()) << f->name;
    ASSERT_EQ(trained.size(), cached.size()) << f->name;
    for (size_t i = 0; i < trained.size(); ++i) {
      EXPECT_TRUE(trained[i]->name.starts_with(attn + ".")) << f->name << ": " << trained[i]->name;
      EXPECT_EQ(trained[i]->name, cached[i]->name) << f->name;
      EXPECT_EQ(trained[i]->shape, cached[i]->shape) << f->name << ": " << trained[i]->name;
    }
    const bool gpt2 = f->family == Family::gpt2;
    EXPECT_EQ(trained.front()->name, attn + (gpt2 ? ".c_attn.weight" : ".q_proj.weight"));
    ASSERT_FALSE(mlp_params.empty()) << f->name;
    for (const nn::Parameter* p : mlp_params)
      EXPECT_TRUE(p->name.starts_with(mlp + ".")) << f->name << ": " << p->name;
    EXPECT_EQ(mlp_params.front()->name, mlp + (gpt2 ? ".c_fc.weight" : ".gate_proj.weight"));
    EXPECT_EQ(nn::architecture_of(c).norms_interleaved, gpt2) << f->name;
  }
}

TEST(NnFamilyRegistry, OnlyGpt2ScalesItsResidualProjections) {
  for (const FamilyTraits* f : nn::all_families())
    EXPECT_EQ(std::string(f->scaled_init_suffix), f->family == Family::gpt2 ? ".c_proj.weight" : "")
        << f->name;
}

}  // namespace
}  // namespace zt
