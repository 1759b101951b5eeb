// Model sizes from hostile configs: every field past its ceiling and every part past 2^47
// parameters is refused naming the field, before anything is built (vocab_size 2^62 used to wrap
// the embedding to 0 bytes; num_layers 10^9 built layers until bad_alloc), and the checked count
// equals the published sizes of real models.
#include <gtest/gtest.h>

#include <string>

#include "io/io_test_util.h"
#include "zerotrain/core/error.h"
#include "zerotrain/nn/model_size.h"
#include "zerotrain/nn/transformer.h"

namespace zt::nn {
namespace {

using test::expect_error;

ModelConfig llama_8b() {
  ModelConfig c;
  c.family = Family::llama;
  c.vocab_size = 128256;
  c.hidden_size = 4096;
  c.intermediate_size = 14336;
  c.num_layers = 32;
  c.num_heads = 32;
  c.num_kv_heads = 8;
  c.head_dim = 128;
  c.max_position_embeddings = 131072;
  return c;
}

TEST(ModelSize, RealModelCounts) {
  const ModelSize s = model_size(llama_8b());
  EXPECT_EQ(s.params, 8030261248);
  EXPECT_EQ(s.embedding_params, 128256 * 4096);
  EXPECT_EQ(s.largest_field, "num_layers");
  EXPECT_FALSE(find_size_problem(llama_8b()));
}

// Each hostile size, the field named and the reason.
TEST(ModelSize, FieldsPastTheirCeilingAreNamed) {
  const auto expect_refused = [](auto edit, const std::string& field, const std::string& why) {
    ModelConfig c = llama_8b();
    edit(c);
    const std::optional<SizeProblem> p = find_size_problem(c);
    ASSERT_TRUE(p) << field;
    EXPECT_EQ(p->field, field);
    EXPECT_NE(p->message.find(why), std::string::npos) << p->message;
    expect_error<ValueError>([&] { c.validate(); }, {"[model_config] " + field + ": ", why});
    expect_error<ValueError>([&] { Transformer model(c, {}); }, {field});
  };
  expect_refused([](ModelConfig& c) { c.vocab_size = int64_t(1) << 62; }, "vocab_size",
                 "4611686018427387904 is above the ceiling 2147483647");
  expect_refused(
      [](ModelConfig& c) {
        c.vocab_size = int64_t(1) << 59;
        c.hidden_size = 32;
      },
      "vocab_size", "above the ceiling");
  expect_refused([](ModelConfig& c) { c.intermediate_size = int64_t(1) << 62; },
                 "intermediate_size", "above the ceiling 4194304");
  expect_refused([](ModelConfig& c) { c.num_layers = 1000000000; }, "num_layers",
                 "1000000000 is above the ceiling 16384");
  expect_refused(
      [](ModelConfig& c) {
        c.num_heads = 1000000000;
        c.num_kv_heads = 1000000000;
      },
      "num_heads", "1000000000 is above the ceiling");
  expect_refused([](ModelConfig& c) { c.head_dim = int64_t(1) << 40; }, "head_dim",
                 "above the ceiling");
}

// Fields each under their ceiling whose products are absurd.
TEST(ModelSize, PartsPastTheParameterCeilingAreNamed) {
  ModelConfig wide = llama_8b();
  wide.vocab_size = 2000000000;
  wide.hidden_size = 1 << 20;
  wide.num_heads = 8192;
  wide.num_kv_heads = 8192;
  wide.head_dim = 128;
  std::optional<SizeProblem> p = find_size_problem(wide);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->field, "vocab_size");
  EXPECT_NE(p->message.find("the token embedding would hold 2097152000000000 parameters"),
            std::string::npos)
      << p->message;

  ModelConfig deep = llama_8b();
  deep.hidden_size = 1 << 16;
  deep.num_heads = 512;
  deep.num_kv_heads = 512;
  deep.intermediate_size = 1 << 18;
  deep.num_layers = 16384;
  p = find_size_problem(deep);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->field, "num_layers");
  EXPECT_NE(p->message.find("the decoder layers would hold"), std::string::npos) << p->message;
}

// Parts each under the ceiling whose sum is not: the largest part's field is named.
TEST(ModelSize, TotalPastTheCeilingNamesTheLargestPart) {
  ModelConfig c = llama_8b();
  c.hidden_size = 1 << 16;
  c.num_heads = 512;
  c.num_kv_heads = 512;
  c.intermediate_size = 1 << 18;
  c.num_layers = 1800;       // 1800 x 6.9e10: 1.24e14 in the layers, under 2^47 (1.41e14)
  c.vocab_size = 200000000;  // 1.3e13 per table, two tables: the total is 1.5e14
  const std::optional<SizeProblem> p = find_size_problem(c);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->field, "num_layers");
  EXPECT_NE(p->message.find("the model would hold"), std::string::npos) << p->message;
}

}  // namespace
}  // namespace zt::nn
