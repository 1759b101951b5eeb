// Where zerotrain follows DeepSpeed 0.19.6 in what it ignores, converts and defaults, and the
// warning each case prints (the key named, and where zerotrain differs, that it does): lax
// conversions in pydantic sections only, unknown top-level keys, a misplaced offload section,
// disabled features, "auto" no trainer fills, and the 0.19.6 defaults.
#include <gtest/gtest.h>

#include <string>

#include "zerotrain/config/load.h"
#include "zerotrain/core/error.h"

namespace zt::config {
namespace {

bool has_warning(const LoadedConfig& l, const std::string& text) {
  for (const std::string& w : l.warnings)
    if (w.find(text) != std::string::npos) return true;
  return false;
}

std::string error_of(const std::string& text) {
  try {
    parse_ds_config(text, "t");
  } catch (const ValueError& e) {
    return e.what();
  }
  return "";
}

TEST(DsConfig0196, StringBoolInAPydanticSectionWarnsNamingTheKey) {
  const LoadedConfig l =
      parse_ds_config(R"({"train_batch_size": 4, "fp16": {"enabled": "true"}})", "t");
  EXPECT_TRUE(l.config.fp16.enabled);
  ASSERT_EQ(l.warnings.size(), 1u);
  EXPECT_EQ(l.warnings[0],
            "[config] fp16.enabled: a string \"true\" read as true, as DeepSpeed's lax validation "
            "converts it; write true");
  // Nested sections convert too; "false" is false (older DeepSpeed took any string as true).
  const LoadedConfig z = parse_ds_config(
      R"({"train_batch_size": 4, "zero_optimization": {"stage": 3,
          "offload_param": {"device": "cpu", "pin_memory": "false", "buffer_count": "7"}}})",
      "t");
  EXPECT_FALSE(z.config.zero_optimization.offload_param->pin_memory);
  EXPECT_EQ(z.config.zero_optimization.offload_param->buffer_count, 7);
  EXPECT_TRUE(has_warning(z, "zero_optimization.offload_param.buffer_count: a string \"7\""));
}

TEST(DsConfig0196, NoConversionOutsideThePydanticSections) {
  EXPECT_NE(error_of(R"({"train_batch_size": 4, "gradient_clipping": "1.0"})")
                .find("gradient_clipping: expected a number, got a string \"1.0\""),
            std::string::npos);
  EXPECT_NE(error_of(R"({"train_batch_size": 4, "aio": {"single_submit": "false"}})")
                .find("aio.single_submit: expected true or false"),
            std::string::npos);
  // What pydantic refuses stays refused inside them.
  EXPECT_NE(error_of(R"({"train_batch_size": 4, "zero_optimization": {"stage": "2.5"}})")
                .find("zero_optimization.stage: expected an integer"),
            std::string::npos);
}

TEST(DsConfig0196, UnknownTopLevelKeysWarnUnknownSectionKeysFail) {
  const LoadedConfig l = parse_ds_config(
      R"({"train_batch_size": 4, "cuda_visible_devices": "0,1", "_comment": "x",
          "gradient_cliping": 0.5})",
      "t");
  EXPECT_TRUE(has_warning(l,
                          "[config] cuda_visible_devices: unknown key, ignored as DeepSpeed "
                          "ignores unknown top-level keys"));
  EXPECT_TRUE(has_warning(l,
                          "[config] gradient_cliping: unknown key, ignored as DeepSpeed "
                          "ignores unknown top-level keys; did you mean \"gradient_clipping\"?"));
  EXPECT_DOUBLE_EQ(l.config.gradient_clipping, 1.0);
  EXPECT_NE(error_of(R"({"train_batch_size": 4, "fp16": {"enabeld": true}})")
                .find("fp16.enabeld: unknown key; did you mean \"enabled\"?"),
            std::string::npos);
}

// A hostile key (an escape sequence, a long run of bytes) is shown as a short escaped excerpt.
TEST(DsConfig0196, UnknownKeysAreShownEscaped) {
  const std::string esc = "\\u001b[31mred";  // JSON's escape: the key holds a raw ESC
  const LoadedConfig l =
      parse_ds_config(str(R"({"train_batch_size": 4, ")", esc, R"(": 1})"), "t");
  ASSERT_EQ(l.warnings.size(), 1u);
  EXPECT_EQ(l.warnings[0].find('\x1b'), std::string::npos) << l.warnings[0];
  EXPECT_TRUE(has_warning(l, "[config] \"\\u001b[31mred\": unknown key")) << l.warnings[0];
  const std::string error = error_of(
      str(R"({"train_batch_size": 4, "fp16": {")", std::string(5000, 'k'), R"(": true}})"));
  EXPECT_LT(error.size(), 200u) << error;
  EXPECT_NE(error.find("fp16.\"kkkk"), std::string::npos) << error;
}

TEST(DsConfig0196, MisplacedOffloadSectionWarnsThatZerotrainDiffers) {
  const LoadedConfig l = parse_ds_config(
      R"({"train_batch_size": 4, "zero_optimization": {"stage": 2},
          "offload_optimizer": {"device": "cpu"}})",
      "t");
  EXPECT_FALSE(l.config.zero_optimization.offload_optimizer);
  ASSERT_EQ(l.warnings.size(), 1u);
  EXPECT_NE(l.warnings[0].find("[config] offload_optimizer: ignored at the top level; it belongs "
                               "in zero_optimization (DeepSpeed ignores it silently"),
            std::string::npos);
  EXPECT_NE(l.warnings[0].find("zerotrain warns, which is where it differs"), std::string::npos);
}

TEST(DsConfig0196, DisabledFeaturesAreIgnoredEnabledOnesRefused) {
  const LoadedConfig l = parse_ds_config(
      R"({"train_batch_size": 4, "torch_autocast": {"enabled": false},
          "compression_training": {"row_pruning": {"shared_parameters": {"enabled": false}}}})",
      "t");
  EXPECT_TRUE(has_warning(l, "[config] torch_autocast: \"enabled\": false"));
  EXPECT_TRUE(has_warning(l, "[config] compression_training: every technique is disabled"));
  EXPECT_NE(error_of(R"({"train_batch_size": 4, "compression_training": {"row_pruning":
                        {"shared_parameters": {"enabled": true}}}})")
                .find("[config] compression_training: not supported by zerotrain"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"train_batch_size": 4, "torch_autocast": {"dtype": "bfloat16"}})")
                .find("[config] torch_autocast: not supported by zerotrain"),
            std::string::npos);
}

TEST(DsConfig0196, AutoNoTrainerFillsTakesTheDefaultWithANote) {
  ConfigOverrides o;
  o.hidden_size = 64;
  const LoadedConfig l = parse_ds_config(
      R"({"train_batch_size": 4, "zero_optimization": {"stage": 3,
          "stage3_gather_16bit_weights_on_model_save": "auto", "stage3_max_live_parameters": "auto",
          "offload_param": {"device": "cpu", "buffer_size": "auto"}}})",
      "t", o);
  const ZeroConfig& z = l.config.zero_optimization;
  EXPECT_FALSE(z.gather_16bit_weights_on_model_save);
  EXPECT_EQ(z.max_live_parameters, 1'000'000'000);
  EXPECT_EQ(z.offload_param->buffer_size, 100'000'000);
  EXPECT_TRUE(has_warning(l,
                          "[config] zero_optimization.offload_param.buffer_size: \"auto\" that "
                          "no trainer fills; DeepSpeed drops it for the key's default, "
                          "100000000"));
  EXPECT_TRUE(has_warning(l,
                          "zero_optimization.stage3_max_live_parameters: \"auto\" that no "
                          "trainer fills"));
  // Below stage 3 Hugging Face leaves the stage-3 bucket keys: the default, not "pass
  // --hidden-size" (which was passed).
  const LoadedConfig s2 = parse_ds_config(
      R"({"train_batch_size": 4, "zero_optimization": {"stage": 2,
          "stage3_param_persistence_threshold": "auto"}})",
      "t", o);
  EXPECT_EQ(s2.config.zero_optimization.param_persistence_threshold, 100'000);
  EXPECT_TRUE(has_warning(s2,
                          "stage3_param_persistence_threshold: \"auto\" that no trainer "
                          "fills below stage 3"));
  // A key a trainer fills still asks for its flag.
  EXPECT_NE(error_of(R"({"train_batch_size": 4, "zero_optimization": {"stage": 3,
                        "stage3_prefetch_bucket_size": "auto"}})")
                .find("\"auto\" is not resolved; pass --hidden-size"),
            std::string::npos);
}

TEST(DsConfig0196, DefaultsOfDeepSpeed0196) {
  const LoadedConfig l = parse_ds_config(
      R"({"train_batch_size": 4, "zero_optimization": {"stage": 3,
          "offload_optimizer": {"device": "cpu"}, "offload_param": {"device": "cpu"}}})",
      "t");
  EXPECT_DOUBLE_EQ(l.config.gradient_clipping, 1.0);
  EXPECT_TRUE(l.config.zero_optimization.offload_optimizer->pin_memory);
  EXPECT_TRUE(l.config.zero_optimization.offload_param->pin_memory);
  EXPECT_DOUBLE_EQ(parse_ds_config(R"({"train_batch_size": 4, "gradient_clipping": 0})", "t")
                       .config.gradient_clipping,
                   0.0);
}

TEST(DsConfig0196, OldSchemasSayDeepSpeedRefusesThemToo) {
  EXPECT_NE(error_of(R"({"train_batch_size": 4, "fp16": {"enabled": true, "opt_level": "O2"}})")
                .find("[config] fp16.opt_level: unknown key; DeepSpeed >= 0.17.1 refuses this too"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"train_batch_size": 4, "bf16": {"enabled": true, "loss_scale": 0}})")
                .find("[config] bf16.loss_scale: unknown key; an fp16 loss-scaling key"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"train_batch_size": 4, "fp16": {"min_loss_scale": 1e-10}})")
                .find("DeepSpeed >= 0.17.1 refuses this too"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"train_batch_size": 4, "compile": {"disable": false}})")
                .find("[config] compile.disable: unknown key; a key of DeepSpeed's former "
                      "torch.compile section; DeepSpeed 0.19.6 refuses this too"),
            std::string::npos);
}

TEST(DsConfig0196, SequenceParallelKeysAtSizeOne) {
  const LoadedConfig l = parse_ds_config(
      R"({"train_batch_size": 4, "seq_parallel_communication_data_type": "bf16"})", "t");
  EXPECT_TRUE(has_warning(l,
                          "[config] seq_parallel_communication_data_type: ignored without "
                          "sequence parallelism"));
  EXPECT_NE(error_of(R"({"train_batch_size": 4, "sequence_parallel_size": 2})")
                .find("[config] sequence_parallel_size: not supported by zerotrain (no sequence "
                      "parallelism)"),
            std::string::npos);
}

}  // namespace
}  // namespace zt::config
