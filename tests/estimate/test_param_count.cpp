// Parameter counts from config.json against the published counts (Hugging Face model cards and
// num_parameters()): Llama-3-8B, Llama-3.2-1B (tied), GPT-2 124M; the largest layer as DeepSpeed
// counts it; the blocks as ZeRO's units. Covers src/zerotrain/estimate/param_count.h.
#include <gtest/gtest.h>

#include "estimate/estimate_fixtures.h"
#include "zerotrain/core/error.h"
#include "zerotrain/estimate/param_count.h"

namespace zt::estimate {
namespace {

TEST(ParamCount, Llama3_8b) {
  const ParamCount c = count_params(estimate_config("llama3_8b.json"));
  EXPECT_EQ(c.total, 8030261248);
  EXPECT_EQ(c.largest_layer, 128256 * 4096);  // embed_tokens and lm_head
  ASSERT_EQ(c.units.size(), 34u);
  EXPECT_EQ(c.units[0].name, "model.embed_tokens");
  EXPECT_EQ(c.units[1].name, "model.layers.0");
  EXPECT_EQ(c.units[1].params, 218112000);
  EXPECT_EQ(c.units.back().name, "lm_head");
  EXPECT_EQ(c.units.back().params, 128256 * 4096 + 4096);
  EXPECT_EQ(c.largest_unit(), 128256 * 4096 + 4096);
  EXPECT_EQ(c.second_largest_unit(), 128256 * 4096);
}

TEST(ParamCount, Llama3_2_1bTied) {
  const nn::ModelConfig cfg = estimate_config("llama3.2_1b.json");
  const ParamCount c = count_params(cfg);
  EXPECT_EQ(c.total, 1235814400);
  EXPECT_EQ(c.total, cfg.num_params());
  // The tied lm_head module still holds the [V, C] table, as DeepSpeed counts modules.
  EXPECT_EQ(c.largest_layer, 128256 * 2048);
  EXPECT_EQ(c.units.back().params, 2048);  // the head owns only its norm
}

TEST(ParamCount, Gpt2) {
  const ParamCount c = count_params(estimate_config("gpt2.json"));
  EXPECT_EQ(c.total, 124439808);
  EXPECT_EQ(c.largest_layer, 50257 * 768);                 // transformer.wte
  EXPECT_EQ(c.units[0].params, 50257 * 768 + 1024 * 768);  // wte + wpe: one block
}

TEST(ParamCount, BenchOneBShape) {
  const ParamCount c = count_params(estimate_config("llama_1b_untied.json"));
  EXPECT_EQ(c.total, 1498482688);  // params_b of bench/results/train_1b_h200.json
  int64_t sum = 0;
  for (const ParamUnit& u : c.units)
    sum += u.params;
  EXPECT_EQ(sum, c.total);
}

TEST(ParamCount, InvalidConfigNamesTheField) {
  nn::ModelConfig cfg = estimate_config("llama3_8b.json");
  cfg.num_kv_heads = 5;
  try {
    count_params(cfg);
    FAIL() << "an inconsistent config was counted";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("num_kv_heads"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace zt::estimate
