// config/key_usage.h: every key `zerotrain config check` prints has a row saying how zerotrain
// uses it (so a key added to the parser needs one), and --explain's lines for a file.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "zerotrain/config/key_usage.h"
#include "zerotrain/config/load.h"

namespace zt::config {
namespace {

void expect_rows(const nlohmann::json& node, const std::string& path) {
  if (node.is_object() && !node.empty()) {
    for (const auto& [key, value] : node.items())
      expect_rows(value, path.empty() ? key : path + "." + key);
    return;
  }
  EXPECT_TRUE(key_usage(path).has_value()) << "no row in config/key_usage.cpp for " << path;
}

TEST(KeyUsage, EveryPrintedKeyHasARow) {
  DsConfig c;
  c.optimizer.emplace();
  c.scheduler.emplace();
  c.zero_optimization.offload_param.emplace();
  c.zero_optimization.offload_optimizer.emplace();
  const nlohmann::json printed = nlohmann::json::parse(ds_config_json(c));
  expect_rows(printed, "");
  EXPECT_GT(printed.size(), 20u);
}

TEST(KeyUsage, ExplainsEachKeyOfAFile) {
  const std::string text = R"({"train_micro_batch_size_per_gpu": "auto",
      "zero_optimization": {"stage": 2, "round_robin_gradients": true, "prefetch_bucket_size": 10},
      "bfloat16": {"enabled": true}, "torch_autocast": {"enabled": false},
      "cuda_visible_devices": "0",
      "optimizer": {"type": "AdamW", "params": {"lr": 1e-4}}})";
  ConfigOverrides o;
  o.micro_batch = 3;
  const LoadedConfig l = parse_ds_config(text, "t", o);
  const std::string out =
      explain_config(nlohmann::json::parse(text), nlohmann::json::parse(ds_config_json(l.config)));
  for (const char* line :
       {"train_micro_batch_size_per_gpu = \"auto\" -> 3: train: the batch",
        "zero_optimization.stage = 2: train: the ZeRO stage",
        "zero_optimization.round_robin_gradients = true: parsed; read nowhere",
        "zero_optimization.prefetch_bucket_size = 10: train at stage 3",
        "bfloat16 = {\"enabled\":true}: deprecated: read as bf16",
        "torch_autocast = {\"enabled\":false}: unsupported, ignored because the feature is off",
        "cuda_visible_devices = \"0\": unknown top-level key: ignored, as DeepSpeed does",
        "optimizer.params.lr = 0.0001: train: the optimizer step (Adam, AdamW, Lamb, Lion, SGD)"})
    EXPECT_NE(out.find(line), std::string::npos) << "missing: " << line << "\nin:\n" << out;
}

TEST(KeyUsage, SettingsReadNowhereWarnWhenTheyChangeWhatDeepSpeedDoes) {
  const LoadedConfig l = parse_ds_config(
      R"({"train_batch_size": 4, "prescale_gradients": true, "gradient_predivide_factor": 2,
          "zero_optimization": {"stage": 3, "zero_quantized_gradients": true,
          "load_from_fp32_weights": false, "round_robin_gradients": true}})",
      "t");
  ASSERT_EQ(l.warnings.size(), 4u);
  EXPECT_EQ(l.warnings[0],
            "[config] prescale_gradients: true changes what DeepSpeed does, but zerotrain reads it "
            "nowhere: gradients are averaged after the sum (DeepSpeed's prescaling divides "
            "before; the same average up to rounding)");
  EXPECT_NE(l.warnings[1].find("gradient_predivide_factor: 2.0 changes"), std::string::npos);
  // The defaults, and keys that only tune speed or memory, say nothing.
  EXPECT_TRUE(parse_ds_config(R"({"train_batch_size": 4, "prescale_gradients": false,
                                  "zero_optimization": {"round_robin_gradients": true}})",
                              "t")
                  .warnings.empty());
}

}  // namespace
}  // namespace zt::config
