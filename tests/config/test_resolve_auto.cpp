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
  o.micro_batch = 8;
  o.lr = 3e-4;
  o.weight_decay = 0.1;
  const auto j = resolved(R"({"train_micro_batch_size_per_gpu": "auto",
      "optimizer": {"type": "AdamW", "params": {"lr": 1e-5}}})",
                          o);
  EXPECT_EQ(j["train_micro_batch_size_per_gpu"], 8);
  EXPECT_DOUBLE_EQ(j["optimizer"]["params"]["lr"].get<double>(), 1e-5);           // the file wins
  EXPECT_DOUBLE_EQ(j["optimizer"]["params"]["weight_decay"].get<double>(), 0.0);  // default
}

TEST(ResolveAuto, GivenFlagsFillMissingKeysAndMustAgree) {
  ConfigOverrides o;
  o.weight_decay = 0.05;
  o.given.insert("--weight-decay");
  o.micro_batch = 4;
  o.given.insert("--micro-batch");
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
  o.micro_batch = 2;
  o.given.insert("--micro-batch");
  o.grad_accum = 3;
  o.given.insert("--grad-accum");
  auto j = resolved(R"({"train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto",
      "gradient_accumulation_steps": "auto"})",
                    o);
  EXPECT_EQ(j["train_batch_size"], 24);
  // Without gradient_accumulation_steps in the file, DeepSpeed's rule accumulates once.
  ConfigOverrides m;
  m.world_size = 2;
  m.micro_batch = 5;
  m.given.insert("--micro-batch");
  j = resolved(R"({"train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto"})", m);
  EXPECT_EQ(j["train_batch_size"], 10);
}

TEST(ResolveAuto, DtypeDecidesTheEnabledFlags) {
  ConfigOverrides o;
  o.dtype = "bf16";
  o.given.insert("--dtype");
  auto j = resolved(R"({"train_batch_size": 8, "fp16": {"enabled": "auto"}})", o);
  EXPECT_EQ(j["fp16"]["enabled"], false);
  EXPECT_EQ(j["bf16"]["enabled"], true);  // an explicit --dtype bf16 turns the section on
  o.dtype = "f32";
  o.given.erase("--dtype");
  j = resolved(R"({"train_batch_size": 8, "bf16": {"enabled": "auto"}})", o);
  EXPECT_EQ(j["bf16"]["enabled"], false);
}

TEST(ResolveAuto, SchedulerTakesWarmupStepsAndLr) {
  ConfigOverrides o;
  o.lr = 1e-3;
  o.given.insert("--lr");
  o.warmup_steps = 10;
  o.given.insert("--warmup");
  o.total_steps = 100;
  o.given.insert("--steps");
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

// A given ZeRO flag fills zero_optimization (also when the file has no such section), agrees
// with the file's spelling of the stage-3 keys and conflicts with a different value; a flag's
// default fills nothing (the key keeps DeepSpeed's default).
TEST(ResolveAuto, GivenZeroFlagsFillMissingKeysAndMustAgree) {
  ConfigOverrides o;
  o.zero_stage = 3;
  o.reduce_bucket_size = 1000;
  o.persistence_threshold = 7;
  o.prefetch_bucket_size = 300;
  o.max_live_parameters = 5000;
  auto j = resolved(R"({"train_batch_size": 8})", o);
  EXPECT_EQ(j["zero_optimization"]["stage"], 0);  // not given: DeepSpeed's defaults
  EXPECT_EQ(j["zero_optimization"]["reduce_bucket_size"], 500000000);
  for (const char* f : {"--zero-stage", "--reduce-bucket-size", "--stage3-persistence-threshold",
                        "--stage3-prefetch-bucket-size", "--stage3-max-live-parameters"})
    o.given.insert(f);
  j = resolved(R"({"train_batch_size": 8})", o);
  const nlohmann::json& z = j["zero_optimization"];
  EXPECT_EQ(z["stage"], 3);
  EXPECT_EQ(z["reduce_bucket_size"], 1000);
  EXPECT_EQ(z["stage3_param_persistence_threshold"], 7);
  EXPECT_EQ(z["stage3_prefetch_bucket_size"], 300);
  EXPECT_EQ(z["stage3_max_live_parameters"], 5000);
  j = resolved(R"({"train_batch_size": 8, "zero_optimization": {"stage": 3,
      "prefetch_bucket_size": 300}})",
               o);
  EXPECT_EQ(j["zero_optimization"]["stage3_prefetch_bucket_size"], 300);  // one spelling filled
  EXPECT_NE(error_of(R"({"train_batch_size": 8, "zero_optimization": {"stage": 3,
      "prefetch_bucket_size": 5}})",
                     o)
                .find("zero_optimization.prefetch_bucket_size: the config gives 5 but "
                      "--stage3-prefetch-bucket-size gives 300"),
            std::string::npos);
  EXPECT_EQ(error_of(R"({"train_batch_size": 8, "zero_optimization": {"stage": 2}})", o),
            "[config] zero_optimization.stage: the config gives 2 but --zero-stage gives 3; make "
            "them agree or set \"auto\"");
  EXPECT_NE(error_of(R"({"train_batch_size": 8, "zero_optimization": {"stage": 3,
      "stage3_max_live_parameters": 1}})",
                     o)
                .find("--stage3-max-live-parameters gives 5000"),
            std::string::npos);
}

// --offload-optimizer / --offload-param fill a missing section's device and must agree with a set
// one; --nvme-path and --pin-memory fill the sections that offload to where they apply, and are an
// error when none does.
TEST(ResolveAuto, GivenOffloadFlagsFillMissingKeysAndMustAgree) {
  ConfigOverrides o;
  o.offload_optimizer = "nvme";
  o.offload_param = "cpu";
  o.nvme_path = "/local_nvme";
  o.pin_memory = true;
  o.sub_group_size = 1000;
  auto j = resolved(R"({"train_batch_size": 8})", o);
  EXPECT_TRUE(j["zero_optimization"]["offload_optimizer"].is_null());  // not given: not filled
  for (const char* f : {"--offload-optimizer", "--offload-param", "--nvme-path", "--pin-memory",
                        "--sub-group-size"})
    o.given.insert(f);
  j = resolved(R"({"train_batch_size": 8, "zero_optimization": {"stage": 3}})", o);
  const nlohmann::json& z = j["zero_optimization"];
  EXPECT_EQ(z["offload_optimizer"]["device"], "nvme");
  EXPECT_EQ(z["offload_optimizer"]["nvme_path"], "/local_nvme");
  EXPECT_EQ(z["offload_optimizer"]["pin_memory"], true);
  EXPECT_EQ(z["offload_param"]["device"], "cpu");
  EXPECT_TRUE(z["offload_param"]["nvme_path"].is_null());  // cpu: no swap files
  EXPECT_EQ(z["offload_param"]["pin_memory"], true);
  EXPECT_EQ(z["sub_group_size"], 1000);
  EXPECT_EQ(error_of(R"({"train_batch_size": 8, "zero_optimization": {"stage": 3,
      "offload_optimizer": {"device": "cpu"}}})",
                     o),
            "[config] zero_optimization.offload_optimizer.device: the config gives \"cpu\" but "
            "--offload-optimizer nvme gives \"nvme\"; make them agree or set \"auto\"");
  EXPECT_NE(error_of(R"({"train_batch_size": 8, "zero_optimization": {"stage": 3,
      "offload_optimizer": {"device": "nvme", "nvme_path": "/other"}}})",
                     o)
                .find("offload_optimizer.nvme_path: the config gives \"/other\" but --nvme-path"),
            std::string::npos);
  // --nvme-path without an nvme section, --pin-memory with nothing offloaded.
  ConfigOverrides cpu = o;
  cpu.offload_optimizer = "cpu";
  EXPECT_NE(error_of(R"({"train_batch_size": 8, "zero_optimization": {"stage": 3}})", cpu)
                .find("--nvme-path is given but neither zero_optimization.offload_optimizer nor "
                      "offload_param has device nvme"),
            std::string::npos);
  ConfigOverrides none;
  none.pin_memory = true;
  none.given.insert("--pin-memory");
  EXPECT_NE(error_of(R"({"train_batch_size": 8})", none)
                .find("zero_optimization.offload_optimizer.pin_memory: --pin-memory is given"),
            std::string::npos);
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
