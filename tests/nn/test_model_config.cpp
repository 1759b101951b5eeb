// ModelConfig and the model's parameter list: family names, validation errors naming the field,
// parameter counts against published sizes of real checkpoints and against the sum of the built
// model's shapes, and the exact Hugging Face names and shapes of every family (biases included).
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "nn/nn_test_util.h"
#include "zerotrain/core/error.h"
#include "zerotrain/nn/transformer.h"

namespace zt {
namespace {

using nn::Family;
using nn::ModelConfig;

ModelConfig make(Family f, int64_t V, int64_t C, int64_t L, int64_t H, int64_t KV, int64_t I,
                 bool tied) {
  ModelConfig c;
  c.family = f;
  c.vocab_size = V;
  c.hidden_size = C;
  c.num_layers = L;
  c.num_heads = H;
  c.num_kv_heads = KV;
  c.head_dim = C / H;
  c.intermediate_size = I;
  c.max_position_embeddings = 1024;
  c.tie_word_embeddings = tied;
  if (f == Family::gpt2) c.hidden_act = "gelu_new";
  return c;
}

TEST(NnModelConfig, FamilyNames) {
  EXPECT_EQ(nn::family_name(Family::llama), "llama");
  EXPECT_EQ(nn::family_name(Family::mistral), "mistral");
  EXPECT_EQ(nn::family_name(Family::qwen2), "qwen2");
  EXPECT_EQ(nn::family_name(Family::gpt2), "gpt2");
}

// Sizes published for the Hugging Face checkpoints (model.num_parameters()).
TEST(NnModelConfig, NumParamsOfRealCheckpoints) {
  const ModelConfig gpt2 = make(Family::gpt2, 50257, 768, 12, 12, 12, 3072, true);
  EXPECT_EQ(gpt2.num_params(), 124439808);
  EXPECT_EQ(gpt2.num_non_embedding_params(), 124439808 - 50257 * 768 - 1024 * 768);
  const ModelConfig llama2 = make(Family::llama, 32000, 4096, 32, 32, 32, 11008, false);
  EXPECT_EQ(llama2.num_params(), 6738415616);
  EXPECT_EQ(llama2.num_non_embedding_params(), 6738415616 - 32000 * 4096);
  const ModelConfig llama3 = make(Family::llama, 128256, 4096, 32, 32, 8, 14336, false);
  EXPECT_EQ(llama3.num_params(), 8030261248);
  const ModelConfig mistral = make(Family::mistral, 32000, 4096, 32, 32, 8, 14336, false);
  EXPECT_EQ(mistral.num_params(), 7241732096);
  ModelConfig qwen = make(Family::qwen2, 151936, 896, 24, 14, 2, 4864, true);
  EXPECT_EQ(qwen.num_params(), 494032768);
  EXPECT_EQ(qwen.num_non_embedding_params(), 494032768 - 151936 * 896);
}

// Counts written out per family from Hugging Face's module definitions, independently of
// model_config.cpp, and the built model's shapes summed.
TEST(NnModelConfig, NumParamsMatchFormulaAndBuiltModel) {
  for (Family f : test::all_families()) {
    for (int variant = 0; variant < 4; ++variant) {
      ModelConfig c = test::tiny_config(f);
      c.tie_word_embeddings = variant & 1;
      c.attention_bias = c.mlp_bias = variant & 2;
      const int64_t V = c.vocab_size, C = c.hidden_size, I = c.intermediate_size, L = c.num_layers;
      const int64_t q = c.num_heads * c.head_dim, kv = c.num_kv_heads * c.head_dim;
      int64_t layer = 0, extra = 0;
      switch (f) {
        case Family::llama:
          layer = C * q + 2 * C * kv + q * C + 3 * C * I + 2 * C;
          if (c.attention_bias) layer += q + 2 * kv + C;
          if (c.mlp_bias) layer += 2 * I + C;
          extra = C;
          break;
        case Family::mistral:  // no biases whatever the flags say
          layer = C * q + 2 * C * kv + q * C + 3 * C * I + 2 * C;
          extra = C;
          break;
        case Family::qwen2:  // q/k/v biases always, none elsewhere
          layer = C * q + 2 * C * kv + q * C + 3 * C * I + 2 * C + q + 2 * kv;
          extra = C;
          break;
        case Family::gpt2:  // ln_1, c_attn, c_proj, ln_2, c_fc, c_proj; wpe; ln_f
          layer = 2 * C + (C * 3 * C + 3 * C) + (C * C + C) + 2 * C + (C * I + I) + (I * C + C);
          extra = 2 * C + c.max_position_embeddings * C;
          break;
      }
      const int64_t expected = V * C + L * layer + extra + (c.tie_word_embeddings ? 0 : V * C);
      const std::string what = nn::family_name(f) + " variant " + std::to_string(variant);
      EXPECT_EQ(c.num_params(), expected) << what;
      nn::Transformer m(c, {.allocate = false});
      int64_t built = 0;
      for (auto* p : m.parameters())
        built += numel_of(p->shape);
      EXPECT_EQ(built, expected) << what;
      const int64_t embed = V * C + (f == Family::gpt2 ? c.max_position_embeddings * C : 0);
      EXPECT_EQ(c.num_non_embedding_params(), expected - embed) << what;
    }
  }
}

std::vector<std::pair<std::string, Shape>> names_and_shapes(const ModelConfig& c) {
  nn::Transformer m(c, {.allocate = false});
  std::vector<std::pair<std::string, Shape>> out;
  for (auto* p : m.parameters())
    out.emplace_back(p->name, p->shape);
  return out;
}

TEST(NnModelConfig, LlamaNamesAndShapes) {
  ModelConfig c = test::tiny_config(Family::llama);
  c.num_layers = 1;
  c.attention_bias = true;
  const std::vector<std::pair<std::string, Shape>> want{
      {"model.embed_tokens.weight", {50, 32}},
      {"model.layers.0.self_attn.q_proj.weight", {32, 32}},
      {"model.layers.0.self_attn.q_proj.bias", {32}},
      {"model.layers.0.self_attn.k_proj.weight", {16, 32}},
      {"model.layers.0.self_attn.k_proj.bias", {16}},
      {"model.layers.0.self_attn.v_proj.weight", {16, 32}},
      {"model.layers.0.self_attn.v_proj.bias", {16}},
      {"model.layers.0.self_attn.o_proj.weight", {32, 32}},
      {"model.layers.0.self_attn.o_proj.bias", {32}},
      {"model.layers.0.mlp.gate_proj.weight", {64, 32}},
      {"model.layers.0.mlp.up_proj.weight", {64, 32}},
      {"model.layers.0.mlp.down_proj.weight", {32, 64}},
      {"model.layers.0.input_layernorm.weight", {32}},
      {"model.layers.0.post_attention_layernorm.weight", {32}},
      {"model.norm.weight", {32}},
      {"lm_head.weight", {50, 32}},
  };
  EXPECT_EQ(names_and_shapes(c), want);
}

TEST(NnModelConfig, Qwen2NamesAndShapesTied) {
  ModelConfig c = test::tiny_config(Family::qwen2);
  c.num_layers = 1;
  c.tie_word_embeddings = true;
  const std::vector<std::pair<std::string, Shape>> want{
      {"model.embed_tokens.weight", {50, 32}},
      {"model.layers.0.self_attn.q_proj.weight", {32, 32}},
      {"model.layers.0.self_attn.q_proj.bias", {32}},
      {"model.layers.0.self_attn.k_proj.weight", {16, 32}},
      {"model.layers.0.self_attn.k_proj.bias", {16}},
      {"model.layers.0.self_attn.v_proj.weight", {16, 32}},
      {"model.layers.0.self_attn.v_proj.bias", {16}},
      {"model.layers.0.self_attn.o_proj.weight", {32, 32}},
      {"model.layers.0.mlp.gate_proj.weight", {64, 32}},
      {"model.layers.0.mlp.up_proj.weight", {64, 32}},
      {"model.layers.0.mlp.down_proj.weight", {32, 64}},
      {"model.layers.0.input_layernorm.weight", {32}},
      {"model.layers.0.post_attention_layernorm.weight", {32}},
      {"model.norm.weight", {32}},
  };
  EXPECT_EQ(names_and_shapes(c), want);
}

TEST(NnModelConfig, MistralHasNoBiases) {
  ModelConfig c = test::tiny_config(Family::mistral);
  c.attention_bias = c.mlp_bias = true;
  for (const auto& [name, shape] : names_and_shapes(c))
    EXPECT_EQ(name.find(".bias"), std::string::npos) << name;
}

TEST(NnModelConfig, Gpt2NamesAndShapes) {
  ModelConfig c = test::tiny_config(Family::gpt2);
  c.num_layers = 2;
  auto got = names_and_shapes(c);
  const std::vector<std::pair<std::string, Shape>> layer{
      {"ln_1.weight", {32}},
      {"ln_1.bias", {32}},
      {"attn.c_attn.weight", {32, 96}},
      {"attn.c_attn.bias", {96}},
      {"attn.c_proj.weight", {32, 32}},
      {"attn.c_proj.bias", {32}},
      {"ln_2.weight", {32}},
      {"ln_2.bias", {32}},
      {"mlp.c_fc.weight", {32, 64}},
      {"mlp.c_fc.bias", {64}},
      {"mlp.c_proj.weight", {64, 32}},
      {"mlp.c_proj.bias", {32}},
  };
  std::vector<std::pair<std::string, Shape>> want{{"transformer.wte.weight", {50, 32}},
                                                  {"transformer.wpe.weight", {16, 32}}};
  for (int l = 0; l < 2; ++l)
    for (const auto& [n, s] : layer)
      want.emplace_back("transformer.h." + std::to_string(l) + "." + n, s);
  want.emplace_back("transformer.ln_f.weight", Shape{32});
  want.emplace_back("transformer.ln_f.bias", Shape{32});
  EXPECT_EQ(got, want);

  c.tie_word_embeddings = false;
  got = names_and_shapes(c);
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(got.back(), (std::pair<std::string, Shape>{"lm_head.weight", {50, 32}}));
}

TEST(NnModelConfig, BlocksAndSharedParameters) {
  for (Family f : test::all_families()) {
    ModelConfig c = test::tiny_config(f);
    c.tie_word_embeddings = true;
    nn::Transformer m(c, {.allocate = false});
    auto& blocks = m.blocks();
    ASSERT_EQ(blocks.size(), 4u);
    const bool gpt2 = f == Family::gpt2;
    EXPECT_EQ(blocks[0]->name(), gpt2 ? "transformer.wte" : "model.embed_tokens");
    EXPECT_EQ(blocks[1]->name(), gpt2 ? "transformer.h.0" : "model.layers.0");
    EXPECT_EQ(blocks[2]->name(), gpt2 ? "transformer.h.1" : "model.layers.1");
    EXPECT_EQ(blocks[3]->name(), "lm_head");
    auto shared = blocks[3]->shared_parameters();
    ASSERT_EQ(shared.size(), 1u);
    EXPECT_EQ(shared[0], blocks[0]->parameters()[0]);
    EXPECT_EQ(m.find(gpt2 ? "transformer.wte.weight" : "model.embed_tokens.weight"), shared[0]);
    EXPECT_EQ(m.find("lm_head.weight"), nullptr);
    c.tie_word_embeddings = false;
    nn::Transformer u(c, {.allocate = false});
    EXPECT_TRUE(u.blocks().back()->shared_parameters().empty());
    EXPECT_NE(u.find("lm_head.weight"), nullptr);
  }
}

template <typename Fn>
void expect_value_error(Fn&& fn, const std::string& field) {
  try {
    fn();
    ADD_FAILURE() << "expected a ValueError naming " << field;
  } catch (const ValueError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("[model_config] ", 0), 0u) << msg;
    EXPECT_NE(msg.find(field), std::string::npos) << msg;
  }
}

TEST(NnModelConfig, ValidateNamesTheBadField) {
  for (Family f : test::all_families())
    EXPECT_NO_THROW(test::tiny_config(f).validate());
  auto bad = [](Family f, auto edit, const std::string& field) {
    ModelConfig c = test::tiny_config(f);
    edit(c);
    expect_value_error([&] { c.validate(); }, field);
    expect_value_error([&] { nn::Transformer m(c, {.allocate = false}); }, field);
  };
  bad(
      Family::llama, [](ModelConfig& c) { c.vocab_size = 0; }, "vocab_size");
  bad(
      Family::llama, [](ModelConfig& c) { c.hidden_size = -1; }, "hidden_size");
  bad(
      Family::llama, [](ModelConfig& c) { c.num_layers = 0; }, "num_layers");
  bad(
      Family::llama, [](ModelConfig& c) { c.num_kv_heads = 3; }, "num_kv_heads");
  bad(
      Family::llama, [](ModelConfig& c) { c.head_dim = 0; }, "head_dim");
  bad(
      Family::llama, [](ModelConfig& c) { c.head_dim = 7; }, "head_dim");
  bad(
      Family::llama, [](ModelConfig& c) { c.intermediate_size = 0; }, "intermediate_size");
  bad(
      Family::llama, [](ModelConfig& c) { c.norm_eps = 0; }, "norm_eps");
  bad(
      Family::llama, [](ModelConfig& c) { c.rope_theta = -1; }, "rope_theta");
  bad(
      Family::llama, [](ModelConfig& c) { c.hidden_act = "gelu"; }, "hidden_act");
  bad(
      Family::llama, [](ModelConfig& c) { c.rope_scaling.high_freq_factor = 1; },
      "rope_scaling.high_freq_factor");
  bad(
      Family::llama, [](ModelConfig& c) { c.rope_scaling.original_max_position_embeddings = 0; },
      "rope_scaling.original_max_position_embeddings");
  bad(
      Family::mistral, [](ModelConfig& c) { c.sliding_window = -1; }, "sliding_window");
  bad(
      Family::gpt2, [](ModelConfig& c) { c.num_kv_heads = 2; }, "num_kv_heads");
  bad(
      Family::gpt2, [](ModelConfig& c) { c.head_dim = 16; }, "head_dim");
  bad(
      Family::gpt2, [](ModelConfig& c) { c.max_position_embeddings = 0; },
      "max_position_embeddings");
  bad(
      Family::gpt2, [](ModelConfig& c) { c.hidden_act = "silu"; }, "hidden_act");
}

TEST(NnModelConfig, TransformerOptionsChecked) {
  const ModelConfig c = test::tiny_config(Family::llama);
  EXPECT_THROW(nn::Transformer(c, {.param_dtype = DType::i32}), DTypeError);
  EXPECT_THROW(nn::Transformer(c, {.param_dtype = DType::f32, .grad_dtype = DType::bf16}),
               DTypeError);
  nn::Transformer m(c, {.param_dtype = DType::bf16, .grad_dtype = DType::f32});
  for (auto* p : m.parameters()) {
    EXPECT_EQ(p->value.dtype(), DType::bf16) << p->name;
    EXPECT_EQ(p->grad.dtype(), DType::f32) << p->name;
    EXPECT_EQ(p->value.shape(), p->shape) << p->name;
  }
}

}  // namespace
}  // namespace zt
