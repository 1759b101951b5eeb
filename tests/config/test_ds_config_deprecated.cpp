// Deprecated ds_config keys (zerotrain/config/deprecations.h): mapped as DeepSpeed maps them,
// each with a warning line for the caller to print.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "zerotrain/config/load.h"
#include "zerotrain/core/error.h"

namespace zt::config {
namespace {

TEST(DsConfigDeprecated, EachKeyWarnsAndMaps) {
  const LoadedConfig l = parse_ds_config(R"({"train_batch_size": 4, "bfloat16": {"enabled": true},
      "zero_optimization": {"stage": 3, "cpu_offload_param": true,
      "stage3_gather_fp16_weights_on_model_save": true}})",
                                         "test");
  EXPECT_TRUE(l.config.bf16.enabled);
  ASSERT_TRUE(l.config.zero_optimization.offload_param);
  EXPECT_EQ(l.config.zero_optimization.offload_param->device, OffloadDevice::cpu);
  EXPECT_FALSE(l.config.zero_optimization.offload_optimizer);
  EXPECT_TRUE(l.config.zero_optimization.gather_16bit_weights_on_model_save);
  ASSERT_EQ(l.warnings.size(), 3u);
  EXPECT_EQ(l.warnings[0], "[config] bfloat16 is deprecated; read as bf16");
  EXPECT_EQ(l.warnings[1],
            "[config] zero_optimization.cpu_offload_param is deprecated; read as "
            "zero_optimization.offload_param {\"device\": \"cpu\"}");
  EXPECT_EQ(l.warnings[2],
            "[config] zero_optimization.stage3_gather_fp16_weights_on_model_save is deprecated; "
            "read as zero_optimization.stage3_gather_16bit_weights_on_model_save");
}

TEST(DsConfigDeprecated, FalseOffloadFlagAddsNoOffload) {
  const LoadedConfig l = parse_ds_config(
      R"({"train_batch_size": 4, "zero_optimization": {"stage": 2, "cpu_offload": false}})", "t");
  EXPECT_FALSE(l.config.zero_optimization.offload_optimizer);
  ASSERT_EQ(l.warnings.size(), 1u);
  EXPECT_NE(l.warnings[0].find("cpu_offload is deprecated"), std::string::npos);
}

TEST(DsConfigDeprecated, LegacyBooleanZero) {
  LoadedConfig l = parse_ds_config(R"({"train_batch_size": 4, "zero_optimization": false})", "t");
  EXPECT_EQ(l.config.zero_optimization.stage, 0);
  l = parse_ds_config(R"({"train_batch_size": 4, "zero_optimization": true})", "t");
  EXPECT_EQ(l.config.zero_optimization.stage, 1);
  EXPECT_EQ(l.config.zero_optimization.allgather_bucket_size, 500'000'000);
  ASSERT_EQ(l.warnings.size(), 1u);
  EXPECT_NE(l.warnings[0].find("zero_optimization: the boolean form is deprecated"),
            std::string::npos);
}

// DeepSpeed 0.19.6 raises on max_grad_norm among its optimizers' params (it used to warn).
TEST(DsConfigDeprecated, MaxGradNormInOptimizerParamsIsRefused) {
  for (const char* value : {"1.0", "0"}) {
    try {
      parse_ds_config(str(R"({"train_batch_size": 4, "optimizer": {"type": "AdamW", "params": )",
                          R"({"max_grad_norm": )", value, "}}}"),
                      "t");
      ADD_FAILURE() << "max_grad_norm " << value << " was accepted";
    } catch (const ValueError& e) {
      EXPECT_NE(std::string(e.what()).find(
                    "[config] optimizer.params.max_grad_norm: not an optimizer parameter: use "
                    "gradient_clipping"),
                std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace zt::config
