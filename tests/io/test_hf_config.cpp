// config.json -> ModelConfig for published configs (tests/fixtures/configs/: Llama 3.1 8B,
// Llama 3.2 1B Instruct, Mistral 7B v0.1, Qwen2 0.5B, GPT-2, and two written by transformers 5),
// round trips through write_hf_config, and every error naming its key.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "io/io_test_util.h"
#include "support/test_util.h"
#include "zerotrain/core/files.h"
#include "zerotrain/core/io_error.h"
#include "zerotrain/io/hf_config.h"

namespace zt::io {
namespace {

using nn::Family;
using nn::ModelConfig;
using test::expect_error;

std::filesystem::path config_path(const std::string& name) {
  return test::fixtures_dir() / "configs" / name;
}

nlohmann::json config_json(const std::string& name) {
  return nlohmann::json::parse(read_text_file(config_path(name), "test"));
}

// Parses a published config after `edit` changed its JSON.
ModelConfig parse_edited(const std::string& name,
                         const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json j = config_json(name);
  edit(j);
  return parse_hf_config(j.dump(), name);
}

void expect_round_trip(const ModelConfig& c) {
  const ModelConfig back = parse_hf_config(hf_config_json(c), "written");
  EXPECT_TRUE(config_differences(c, back).empty())
      << "lost: " << ::testing::PrintToString(config_differences(c, back));
}

TEST(HfConfig, Llama31_8B) {
  const ModelConfig c = read_hf_config(config_path("llama3.1_8b.json"));
  EXPECT_EQ(c.family, Family::llama);
  EXPECT_EQ(c.vocab_size, 128256);
  EXPECT_EQ(c.hidden_size, 4096);
  EXPECT_EQ(c.intermediate_size, 14336);
  EXPECT_EQ(c.num_layers, 32);
  EXPECT_EQ(c.num_heads, 32);
  EXPECT_EQ(c.num_kv_heads, 8);
  EXPECT_EQ(c.head_dim, 128);
  EXPECT_EQ(c.max_position_embeddings, 131072);
  EXPECT_EQ(c.norm_eps, 1e-5);
  EXPECT_EQ(c.rope_theta, 500000.0);
  EXPECT_EQ(c.rope_scaling.factor, 8.0);
  EXPECT_EQ(c.rope_scaling.low_freq_factor, 1.0);
  EXPECT_EQ(c.rope_scaling.high_freq_factor, 4.0);
  EXPECT_EQ(c.rope_scaling.original_max_position_embeddings, 8192);
  EXPECT_FALSE(c.tie_word_embeddings);
  EXPECT_FALSE(c.attention_bias);
  EXPECT_FALSE(c.mlp_bias);
  EXPECT_EQ(c.sliding_window, 0);
  EXPECT_EQ(c.hidden_act, "silu");
  EXPECT_EQ(c.torch_dtype, "bfloat16");
  EXPECT_EQ(c.bos_token_id, 128000);
  EXPECT_EQ(c.eos_token_id, 128001);
  expect_round_trip(c);
}

TEST(HfConfig, Llama32_1B_TiedWithHeadDimAndEosList) {
  const ModelConfig c = read_hf_config(config_path("llama3.2_1b_instruct.json"));
  EXPECT_EQ(c.hidden_size, 2048);
  EXPECT_EQ(c.num_layers, 16);
  EXPECT_EQ(c.head_dim, 64);
  EXPECT_TRUE(c.tie_word_embeddings);
  EXPECT_EQ(c.rope_scaling.factor, 32.0);
  EXPECT_EQ(c.eos_token_id, 128001);  // the first of [128001, 128008, 128009]
  expect_round_trip(c);
  // transformers 5 writes rope_parameters and dtype for the same model.
  const ModelConfig v5 = read_hf_config(config_path("llama3.2_1b_instruct_transformers5.json"));
  EXPECT_TRUE(config_differences(c, v5).empty())
      << ::testing::PrintToString(config_differences(c, v5));
}

TEST(HfConfig, Mistral7B) {
  const ModelConfig c = read_hf_config(config_path("mistral_7b_v0.1.json"));
  EXPECT_EQ(c.family, Family::mistral);
  EXPECT_EQ(c.vocab_size, 32000);
  EXPECT_EQ(c.num_kv_heads, 8);
  EXPECT_EQ(c.head_dim, 128);
  EXPECT_EQ(c.max_position_embeddings, 32768);
  EXPECT_EQ(c.rope_theta, 10000.0);
  EXPECT_EQ(c.rope_scaling.factor, 0.0);
  EXPECT_EQ(c.sliding_window, 4096);
  EXPECT_FALSE(c.attention_bias);
  EXPECT_EQ(c.bos_token_id, 1);
  EXPECT_EQ(c.eos_token_id, 2);
  expect_round_trip(c);
  EXPECT_EQ(parse_edited("mistral_7b_v0.1.json", [](auto& j) { j["sliding_window"] = nullptr; })
                .sliding_window,
            0);
  EXPECT_EQ(parse_edited("mistral_7b_v0.1.json", [](auto& j) { j.erase("sliding_window"); })
                .sliding_window,
            4096);  // MistralConfig's default
}

TEST(HfConfig, Qwen2_05B) {
  const ModelConfig c = read_hf_config(config_path("qwen2_0.5b.json"));
  EXPECT_EQ(c.family, Family::qwen2);
  EXPECT_EQ(c.vocab_size, 151936);
  EXPECT_EQ(c.hidden_size, 896);
  EXPECT_EQ(c.intermediate_size, 4864);
  EXPECT_EQ(c.num_layers, 24);
  EXPECT_EQ(c.num_heads, 14);
  EXPECT_EQ(c.num_kv_heads, 2);
  EXPECT_EQ(c.head_dim, 64);
  EXPECT_EQ(c.norm_eps, 1e-6);
  EXPECT_EQ(c.rope_theta, 1e6);
  EXPECT_TRUE(c.tie_word_embeddings);
  EXPECT_TRUE(c.attention_bias);  // q/k/v biases are part of Qwen2
  EXPECT_FALSE(c.mlp_bias);
  EXPECT_EQ(c.sliding_window, 0);  // use_sliding_window is false
  EXPECT_EQ(c.bos_token_id, 151643);
  expect_round_trip(c);
  const ModelConfig v5 = read_hf_config(config_path("qwen2_0.5b_transformers5.json"));
  EXPECT_TRUE(config_differences(c, v5).empty())
      << ::testing::PrintToString(config_differences(c, v5));
}

TEST(HfConfig, Qwen2SlidingWindowOnlyWhenEnabledOnEveryLayer) {
  auto with = [](bool use, int64_t first_window_layer) {
    return parse_edited("qwen2_0.5b.json", [=](auto& j) {
      j["use_sliding_window"] = use;
      j["sliding_window"] = 4096;
      j["max_window_layers"] = first_window_layer;
    });
  };
  EXPECT_EQ(with(false, 0).sliding_window, 0);
  EXPECT_EQ(with(true, 0).sliding_window, 4096);
  EXPECT_EQ(with(true, 24).sliding_window, 0);
  expect_round_trip(with(true, 0));
  expect_error<ValueError>([&] { with(true, 12); },
                           {"max_window_layers", "12 of 24 layers", "not supported"});
}

TEST(HfConfig, Gpt2) {
  const ModelConfig c = read_hf_config(config_path("gpt2.json"));
  EXPECT_EQ(c.family, Family::gpt2);
  EXPECT_EQ(c.vocab_size, 50257);
  EXPECT_EQ(c.hidden_size, 768);
  EXPECT_EQ(c.intermediate_size, 3072);  // n_inner absent: 4 * n_embd
  EXPECT_EQ(c.num_layers, 12);
  EXPECT_EQ(c.num_heads, 12);
  EXPECT_EQ(c.num_kv_heads, 12);
  EXPECT_EQ(c.head_dim, 64);
  EXPECT_EQ(c.max_position_embeddings, 1024);
  EXPECT_EQ(c.norm_eps, 1e-5);
  EXPECT_EQ(c.hidden_act, "gelu_new");
  EXPECT_TRUE(c.tie_word_embeddings);  // GPT2Config's default
  EXPECT_TRUE(c.attention_bias);
  EXPECT_TRUE(c.mlp_bias);
  EXPECT_EQ(c.torch_dtype, "float32");
  EXPECT_EQ(c.eos_token_id, 50256);
  expect_round_trip(c);
  EXPECT_EQ(parse_edited("gpt2.json", [](auto& j) { j["n_inner"] = nullptr; }).intermediate_size,
            3072);
  EXPECT_EQ(parse_edited("gpt2.json", [](auto& j) { j["n_inner"] = 1000; }).intermediate_size,
            1000);
}

TEST(HfConfig, ConfigInADirectory) {
  test::TempDir dir;
  const ModelConfig c = read_hf_config(config_path("mistral_7b_v0.1.json"));
  write_hf_config(c, dir.path());
  EXPECT_EQ(test::list_dir(dir.path()), (std::vector<std::string>{"config.json"}));
  EXPECT_TRUE(config_differences(c, read_hf_config(dir.path())).empty());
  const auto j = nlohmann::json::parse(test::read_bytes(dir / "config.json"));
  EXPECT_EQ(j["architectures"], nlohmann::json::array({"MistralForCausalLM"}));
  EXPECT_EQ(j["model_type"], "mistral");
  EXPECT_EQ(j["torch_dtype"], "bfloat16");
}

TEST(HfConfig, UnsupportedModelType) {
  expect_error<ValueError>(
      [] { parse_edited("gpt2.json", [](auto& j) { j["model_type"] = "bert"; }); },
      {"[hf_config]", "gpt2.json", "model_type", "\"bert\" is not supported",
       "llama, mistral, qwen2, gpt2"});
  expect_error<FormatError>(
      [] { parse_edited("gpt2.json", [](auto& j) { j.erase("model_type"); }); },
      {"missing required key \"model_type\""});
}

TEST(HfConfig, MissingAndMistypedKeysAreNamed) {
  expect_error<FormatError>(
      [] { parse_edited("llama3.1_8b.json", [](auto& j) { j.erase("hidden_size"); }); },
      {"llama3.1_8b.json", "missing required key \"hidden_size\""});
  expect_error<FormatError>([] { parse_edited("gpt2.json", [](auto& j) { j.erase("n_embd"); }); },
                            {"missing required key \"n_embd\""});
  expect_error<FormatError>(
      [] { parse_edited("llama3.1_8b.json", [](auto& j) { j["hidden_size"] = "4096"; }); },
      {"hidden_size: expected an integer", "a string \"4096\""});
  expect_error<FormatError>(
      [] { parse_edited("llama3.1_8b.json", [](auto& j) { j["num_hidden_layers"] = 32.5; }); },
      {"num_hidden_layers: expected an integer", "32.5"});
  expect_error<FormatError>(
      [] { parse_edited("llama3.1_8b.json", [](auto& j) { j["rms_norm_eps"] = "small"; }); },
      {"rms_norm_eps: expected a number"});
  expect_error<FormatError>(
      [] { parse_edited("llama3.1_8b.json", [](auto& j) { j["tie_word_embeddings"] = 1; }); },
      {"tie_word_embeddings: expected true or false"});
  expect_error<FormatError>(
      [] { parse_edited("llama3.1_8b.json", [](auto& j) { j["rope_scaling"]["factor"] = "8"; }); },
      {"rope_scaling.factor: expected a number"});
  expect_error<FormatError>(
      [] { parse_edited("llama3.1_8b.json", [](auto& j) { j["rope_scaling"].erase("factor"); }); },
      {"missing required key \"rope_scaling.factor\""});
  expect_error<FormatError>(
      [] { parse_edited("llama3.1_8b.json", [](auto& j) { j["rope_scaling"] = 8; }); },
      {"rope_scaling: expected an object"});
  expect_error<FormatError>([] { parse_hf_config("{\"model_type\": ", "broken.json"); },
                            {"broken.json", "not valid JSON"});
  expect_error<FormatError>([] { parse_hf_config("[]", "list.json"); },
                            {"list.json", "expected a JSON object"});
}

TEST(HfConfig, UnsupportedValuesAreNamed) {
  expect_error<ValueError>(
      [] {
        parse_edited("llama3.1_8b.json", [](auto& j) { j["rope_scaling"]["rope_type"] = "yarn"; });
      },
      {"rope_scaling.rope_type", "\"yarn\" is not supported", "default, llama3"});
  expect_error<ValueError>(
      [] {
        parse_edited("mistral_7b_v0.1.json", [](auto& j) {
          j["rope_scaling"] = {{"type", "linear"}, {"factor", 2.0}};
        });
      },
      {"rope_scaling.type", "\"linear\""});
  expect_error<ValueError>(
      [] { parse_edited("llama3.1_8b.json", [](auto& j) { j["hidden_act"] = "gelu"; }); },
      {"hidden_act", "\"gelu\" is not supported"});
  expect_error<ValueError>(
      [] { parse_edited("gpt2.json", [](auto& j) { j["activation_function"] = "relu"; }); },
      {"activation_function", "\"relu\""});
  expect_error<ValueError>(
      [] { parse_edited("llama3.1_8b.json", [](auto& j) { j["num_key_value_heads"] = 5; }); },
      {"num_key_value_heads", "5 does not divide num_attention_heads (32)"});
  expect_error<ValueError>([] { parse_edited("gpt2.json", [](auto& j) { j["n_head"] = 7; }); },
                           {"n_embd", "768 is not a multiple of n_head (7)"});
  expect_error<ValueError>(
      [] { parse_edited("llama3.1_8b.json", [](auto& j) { j["vocab_size"] = 0; }); },
      {"vocab_size", "must be positive"});
  expect_error<ValueError>(
      [] { parse_edited("llama3.1_8b.json", [](auto& j) { j["torch_dtype"] = "float64"; }); },
      {"torch_dtype", "\"float64\""});
  expect_error<ValueError>(
      [] {
        parse_edited("gpt2.json", [](auto& j) { j["scale_attn_by_inverse_layer_idx"] = true; });
      },
      {"scale_attn_by_inverse_layer_idx"});
}

TEST(HfConfig, WriterRefusesWhatTheModelTypeCannotExpress) {
  ModelConfig llama = read_hf_config(config_path("llama3.1_8b.json"));
  llama.sliding_window = 4096;
  expect_error<ValueError>([&] { hf_config_json(llama); }, {"llama", "sliding_window"});

  ModelConfig gpt2 = read_hf_config(config_path("gpt2.json"));
  gpt2.num_kv_heads = 4;
  expect_error<ValueError>([&] { hf_config_json(gpt2); }, {"gpt2", "num_kv_heads"});

  ModelConfig qwen2 = read_hf_config(config_path("qwen2_0.5b.json"));
  qwen2.attention_bias = false;
  qwen2.mlp_bias = true;
  expect_error<ValueError>([&] { hf_config_json(qwen2); }, {"qwen2", "attention_bias, mlp_bias"});

  ModelConfig mistral = read_hf_config(config_path("mistral_7b_v0.1.json"));
  mistral.hidden_size = 0;
  expect_error<ValueError>([&] { hf_config_json(mistral); }, {"hidden_size", "must be positive"});
}

TEST(HfConfig, MissingFileIsAnIoError) {
  expect_error<IoError>([] { read_hf_config(config_path("absent.json")); },
                        {"[hf_config]", "absent.json"});
}

// Hostile sizes are refused by their config.json key before anything is sized from them (the
// cases of issue 17: each used to wrap to a 0-byte table, build layers until bad_alloc, or
// estimate "0 B").
TEST(HfConfig, AbsurdSizesAreRefusedByKey) {
  const auto refused = [](const char* name, auto edit, std::vector<std::string> parts) {
    expect_error<ValueError>([&] { parse_edited(name, edit); }, parts);
  };
  refused("llama3.1_8b.json", [](auto& j) { j["vocab_size"] = int64_t(1) << 62; },
          {"llama3.1_8b.json: vocab_size: 4611686018427387904 is above the ceiling"});
  refused("llama3.1_8b.json",
          [](auto& j) {
            j["vocab_size"] = int64_t(1) << 59;
            j["hidden_size"] = 32;
            j["num_attention_heads"] = 1;
            j["num_key_value_heads"] = 1;
          },
          {"vocab_size: 576460752303423488 is above the ceiling"});
  refused("llama3.1_8b.json", [](auto& j) { j["intermediate_size"] = int64_t(1) << 62; },
          {"intermediate_size: 4611686018427387904 is above the ceiling"});
  refused("llama3.1_8b.json", [](auto& j) { j["num_hidden_layers"] = 1000000000; },
          {"num_hidden_layers: 1000000000 is above the ceiling"});
  refused("llama3.1_8b.json",
          [](auto& j) {
            j["num_attention_heads"] = 1000000000;
            j["num_key_value_heads"] = 1000000000;
            j["head_dim"] = 128;
          },
          {"num_attention_heads: 1000000000 is above the ceiling"});
  refused("gpt2.json", [](auto& j) { j["n_layer"] = 1000000000; },
          {"n_layer: 1000000000 is above the ceiling"});
  refused("gpt2.json", [](auto& j) { j["n_positions"] = int64_t(1) << 40; },
          {"n_positions: 1099511627776 is above the ceiling"});
}

// A deeply nested config is one line, and strings from the file are quoted escaped and short.
TEST(HfConfig, HostileJsonIsOneEscapedLine) {
  expect_error<FormatError>(
      [] { parse_hf_config("{\"model_type\": " + std::string(70000, '[') + "}", "deep.json"); },
      {"deep.json: not valid JSON: nested deeper than 64 levels"});
  try {
    parse_edited("llama3.1_8b.json", [](auto& j) {
      j["model_type"] = std::string("x\x1b[2J\n", 6) + std::string(5000, 'y');
    });
    FAIL() << "accepted";
  } catch (const ValueError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("model_type: \"x\\u001b[2J\\n"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\x1b'), std::string::npos);
    EXPECT_EQ(msg.find('\n'), std::string::npos);
    EXPECT_LT(msg.size(), 200u);
  }
}

}  // namespace
}  // namespace zt::io
