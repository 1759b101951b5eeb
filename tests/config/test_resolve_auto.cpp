// "auto" resolution as the Hugging Face Trainer does it (zerotrain/config/resolve_auto.h): the
// hidden-size formulas, explicit flags filling and contradicting the file, defaults filling only
// "auto".
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "zerotrain/config/load.h"
#include "zerotrain/core/error.h"

namespace zt::config {
namespace {

nlohmann::json resolved(const std::string& text, const ConfigOverrides& o) {
  return nlohmann::json::parse(ds_config_json(parse_ds_config(text, "test", o).config));
}

std::string error_of(const std::string& text, const ConfigOverrides& o) {
  try {
    parse_ds_config(text, "test", o);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(ResolveAuto, HiddenSizeFormulasMatchHuggingFace) {
  ConfigOverrides o;
  o.hidden_size = 768;
  const auto j = resolved(R"({"train_batch_size": 8, "zero_optimization": {"stage": 3,
      "reduce_bucket_size": "auto", "stage3_prefetch_bucket_size": "auto",
      "param_persistence_threshold": "auto"}})",
                          o);
  EXPECT_EQ(j["zero_optimization"]["reduce_bucket_size"], 768 * 768);
  EXPECT_EQ(j["zero_optimization"]["stage3_prefetch_bucket_size"], 530841);  // int(530841.6)
  EXPECT_EQ(j["zero_optimization"]["stage3_param_persistence_threshold"], 7680);
}

TEST(ResolveAuto, DefaultsFillAutoButNeverMissingKeysOrConflicts) {
  ConfigOverrides o;
  o.micro_batch = CliValue<int64_t>::default_value(8);
  o.lr = CliValue<double>::default_value(3e-4);
  o.weight_decay = CliValue<double>::default_value(0.1);
  const auto j = resolved(R"({"train_micro_batch_size_per_gpu": "auto",
      "optimizer": {"type": "AdamW", "params": {"lr": 1e-5}}})",
                          o);
  EXPECT_EQ(j["train_micro_batch_size_per_gpu"], 8);
  EXPECT_DOUBLE_EQ(j["optimizer"]["params"]["lr"].get<double>(), 1e-5);           // the file wins
  EXPECT_DOUBLE_EQ(j["optimizer"]["params"]["weight_decay"].get<double>(), 0.0);  // default
}

TEST(ResolveAuto, GivenFlagsFillMissingKeysAndMustAgree) {
  ConfigOverrides o;
  o.weight_decay = CliValue<double>::explicit_value(0.05);
  o.micro_batch = CliValue<int64_t>::explicit_value(4);
  const auto j = resolved(R"({"train_batch_size": 16, "optimizer": {"type": "Adam"}})", o);
  EXPECT_EQ(j["train_micro_batch_size_per_gpu"], 4);
  EXPECT_EQ(j["gradient_accumulation_steps"], 4);
  EXPECT_DOUBLE_EQ(j["optimizer"]["params"]["weight_decay"].get<double>(), 0.05);
  EXPECT_EQ(error_of(R"({"train_micro_batch_size_per_gpu": 2})", o),
            "[config] train_micro_batch_size_per_gpu: the config gives 2 but --micro-batch gives "
            "4; make them agree or set \"auto\"");
}

TEST(ResolveAuto, TrainBatchSizeIsMicroTimesAccumulationTimesWorld) {
  ConfigOverrides o;
  o.world_size = 4;
  o.micro_batch = CliValue<int64_t>::explicit_value(2);
  o.grad_accum = CliValue<int64_t>::explicit_value(3);
  auto j = resolved(R"({"train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto",
      "gradient_accumulation_steps": "auto"})",
                    o);
  EXPECT_EQ(j["train_batch_size"], 24);
  // Without gradient_accumulation_steps in the file, DeepSpeed's rule accumulates once.
  ConfigOverrides m;
  m.world_size = 2;
  m.micro_batch = CliValue<int64_t>::explicit_value(5);
  j = resolved(R"({"train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto"})", m);
  EXPECT_EQ(j["train_batch_size"], 10);
}

TEST(ResolveAuto, DtypeDecidesTheEnabledFlags) {
  ConfigOverrides o;
  o.dtype = CliValue<std::string>::explicit_value("bf16");
  auto j = resolved(R"({"train_batch_size": 8, "fp16": {"enabled": "auto"}})", o);
  EXPECT_EQ(j["fp16"]["enabled"], false);
  EXPECT_EQ(j["bf16"]["enabled"], true);  // an explicit --dtype bf16 turns the section on
  o.dtype = CliValue<std::string>::default_value("f32");
  j = resolved(R"({"train_batch_size": 8, "bf16": {"enabled": "auto"}})", o);
  EXPECT_EQ(j["bf16"]["enabled"], false);
}

TEST(ResolveAuto, SchedulerTakesWarmupStepsAndLr) {
  ConfigOverrides o;
  o.lr = CliValue<double>::explicit_value(1e-3);
  o.warmup_steps = CliValue<int64_t>::explicit_value(10);
  o.total_steps = CliValue<int64_t>::explicit_value(100);
  const auto j = resolved(R"({"train_batch_size": 8, "scheduler": {"type": "WarmupDecayLR",
      "params": {"warmup_min_lr": "auto", "warmup_max_lr": "auto", "warmup_num_steps": "auto",
      "total_num_steps": "auto"}}})",
                          o);
  const auto& p = j["scheduler"]["params"];
  EXPECT_EQ(p["warmup_min_lr"], 0.0);
  EXPECT_DOUBLE_EQ(p["warmup_max_lr"].get<double>(), 1e-3);
  EXPECT_EQ(p["warmup_num_steps"], 10);
  EXPECT_EQ(p["total_num_steps"], 100);
}

TEST(ResolveAuto, UnresolvedAutoNamesKeyAndFlag) {
  const ConfigOverrides none;
  EXPECT_EQ(error_of(R"({"train_batch_size": 8, "gradient_clipping": "auto"})", none),
            "[config] gradient_clipping: \"auto\" is not resolved; pass --clip");
  EXPECT_NE(error_of(R"({"train_batch_size": 8, "scheduler": {"type": "WarmupLR",
      "params": {"warmup_num_steps": "auto"}}})",
                     none)
                .find("scheduler.params.warmup_num_steps: \"auto\" is not resolved; pass --warmup"),
            std::string::npos);
}

}  // namespace
}  // namespace zt::config
