// The family registry (nn/family_registry.h) and each family's traits (nn/family_<name>.cpp):
// lookups by family and model_type, and that every built model's parameter names are the ones its
// traits promise (prefix, input embedding, layers, final norm).
#include <gtest/gtest.h>

#include <string>

#include "nn/nn_test_util.h"
#include "zerotrain/nn/family_registry.h"
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

TEST(NnFamilyRegistry, OnlyGpt2ScalesItsResidualProjections) {
  for (const FamilyTraits* f : nn::all_families())
    EXPECT_EQ(std::string(f->scaled_init_suffix), f->family == Family::gpt2 ? ".c_proj.weight" : "")
        << f->name;
}

}  // namespace
}  // namespace zt
