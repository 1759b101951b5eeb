// transformers.AutoConfig reads the config.json files write_hf_config writes back into the same
// model: tools/hf_config_readback.py resolves each with transformers and prints it in ModelConfig
// terms. Skips when Python with transformers is not available ($ZT_PYTHON, else python3).
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "io/fake_model.h"
#include "io/io_test_util.h"
#include "support/test_util.h"
#include "zerotrain/core/files.h"
#include "zerotrain/io/hf_config.h"

namespace zt::io {
namespace {

std::string python() {
  const char* p = std::getenv("ZT_PYTHON");
  return p != nullptr && *p != '\0' ? p : "python3";
}

bool has_transformers() {
  return std::system((python() + " -c 'import transformers' > /dev/null 2>&1").c_str()) == 0;
}

std::vector<nn::ModelConfig> configs_to_check() {
  const auto dir = test::fixtures_dir() / "configs";
  std::vector<nn::ModelConfig> out;
  for (const char* f : {"llama3.1_8b.json", "llama3.2_1b_instruct.json", "mistral_7b_v0.1.json",
                        "qwen2_0.5b.json", "gpt2.json"})
    out.push_back(read_hf_config(dir / f));
  nn::ModelConfig llama = test::tiny_llama();
  llama.head_dim = 8;  // not hidden / heads
  llama.attention_bias = true;
  llama.mlp_bias = true;
  llama.torch_dtype = "float16";
  out.push_back(llama);
  nn::ModelConfig qwen2 = test::tiny_qwen2();
  qwen2.sliding_window = 32;
  qwen2.bos_token_id = -1;
  out.push_back(qwen2);
  nn::ModelConfig mistral = test::tiny_llama();
  mistral.family = nn::Family::mistral;
  out.push_back(mistral);
  nn::ModelConfig gpt2 = test::tiny_gpt2();
  gpt2.tie_word_embeddings = false;
  gpt2.intermediate_size = 20;
  gpt2.hidden_act = "gelu_pytorch_tanh";
  out.push_back(gpt2);
  return out;
}

void expect_matches(const nn::ModelConfig& c, const nlohmann::json& t) {
  const std::string what = hf_model_type(c.family) + " " + std::to_string(c.hidden_size);
  EXPECT_EQ(t["model_type"], hf_model_type(c.family)) << what;
  EXPECT_EQ(t["architectures"], nlohmann::json::array({hf_architecture(c.family)})) << what;
  EXPECT_EQ(t["vocab_size"], c.vocab_size) << what;
  EXPECT_EQ(t["hidden_size"], c.hidden_size) << what;
  EXPECT_EQ(t["intermediate_size"], c.intermediate_size) << what;
  EXPECT_EQ(t["num_layers"], c.num_layers) << what;
  EXPECT_EQ(t["num_heads"], c.num_heads) << what;
  EXPECT_EQ(t["num_kv_heads"], c.num_kv_heads) << what;
  EXPECT_EQ(t["head_dim"], c.head_dim) << what;
  EXPECT_EQ(t["max_position_embeddings"], c.max_position_embeddings) << what;
  EXPECT_EQ(t["norm_eps"].get<double>(), c.norm_eps) << what;
  EXPECT_EQ(t["hidden_act"], c.hidden_act) << what;
  EXPECT_EQ(t["tie_word_embeddings"], c.tie_word_embeddings) << what;
  EXPECT_EQ(t["attention_bias"], c.attention_bias) << what;
  EXPECT_EQ(t["mlp_bias"], c.mlp_bias) << what;
  EXPECT_EQ(t["sliding_window"], c.sliding_window) << what;
  EXPECT_EQ(t["torch_dtype"], c.torch_dtype) << what;
  EXPECT_EQ(t["bos_token_id"], c.bos_token_id) << what;
  EXPECT_EQ(t["eos_token_id"], c.eos_token_id) << what;
  if (c.family == nn::Family::gpt2) return;
  EXPECT_FALSE(t.contains("rope_type")) << what << ": " << t.value("rope_type", "");
  EXPECT_EQ(t["rope_theta"].get<double>(), c.rope_theta) << what;
  EXPECT_EQ(t["rope_scaling_factor"].get<double>(), c.rope_scaling.factor) << what;
  if (c.rope_scaling.factor == 0) return;
  EXPECT_EQ(t["low_freq_factor"].get<double>(), c.rope_scaling.low_freq_factor) << what;
  EXPECT_EQ(t["high_freq_factor"].get<double>(), c.rope_scaling.high_freq_factor) << what;
  EXPECT_EQ(t["original_max_position_embeddings"], c.rope_scaling.original_max_position_embeddings)
      << what;
}

TEST(HfConfigTransformers, AutoConfigReadsBackTheSameModel) {
  if (!has_transformers()) GTEST_SKIP() << python() << " has no transformers (set ZT_PYTHON)";
  test::TempDir dir;
  const auto configs = configs_to_check();
  std::string args;
  for (size_t i = 0; i < configs.size(); ++i) {
    const auto sub = dir / std::to_string(i);
    std::filesystem::create_directories(sub);
    write_hf_config(configs[i], sub);
    args += " " + sub.string();
  }
  const auto script =
      test::fixtures_dir().parent_path().parent_path() / "tools" / "hf_config_readback.py";
  const auto out = dir / "readback.json";
  const std::string cmd = python() + " " + script.string() + args + " > " + out.string() + " 2> " +
                          (dir / "err").string();
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd << "\n" << test::read_bytes(dir / "err");
  const auto results = nlohmann::json::parse(test::read_bytes(out));
  ASSERT_EQ(results.size(), configs.size());
  for (size_t i = 0; i < configs.size(); ++i)
    expect_matches(configs[i], results[i]);
}

}  // namespace
}  // namespace zt::io
