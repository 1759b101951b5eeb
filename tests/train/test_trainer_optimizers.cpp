// The trainer with the other update rules a ds_config names (the path `zerotrain train --deepspeed`
// takes): {"type": "Lamb" | "Lion" | "SGD", "params": {...}} trains a tiny llama for 3 steps, its
// checkpoint holds the rule's state (Lamb's two moments, Lion's exp_avg, SGD's momentum_buffer or
// only masters), and a run interrupted after a checkpoint and resumed ends bitwise where the
// straight run ends (weights and optimizer state); each rule ends elsewhere than AdamW. What train
// refuses: Lamb with optimizer offload (naming the keys), Adam's flags with another rule, the low
// precision mode with another rule. The rules step by step: tests/optim/test_flat_optimizer.cpp;
// across ZeRO stages: tests/mpi/test_zero_parity.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/io_test_util.h"
#include "support/checkpoint_tensors.h"
#include "train/train_test_util.h"
#include "zerotrain/config/load.h"
#include "zerotrain/core/error.h"
#include "zerotrain/io/safetensors.h"
#include "zerotrain/train/checkpoint.h"
#include "zerotrain/train/ds_train_config.h"
#include "zerotrain/train/trainer.h"

namespace zt {
namespace {

namespace fs = std::filesystem;

struct Interrupted : std::runtime_error {
  Interrupted() : std::runtime_error("interrupted") {}
};

// `c` with the ds_config text applied (flags `given` on the command line).
train::TrainConfig with_ds_config(train::TrainConfig c, const std::string& text,
                                  const train::GivenFlags& given = {}) {
  const config::DsConfig ds =
      config::parse_ds_config(text, "test", train::train_overrides(c, given, std::nullopt)).config;
  train::apply_ds_config(ds, given, c);
  return c;
}

std::string ds_text(const std::string& optimizer, int stage = 0) {
  return R"({"train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 2,
             "bf16": {"enabled": true}, "zero_optimization": {"stage": )" +
         std::to_string(stage) + R"(}, "optimizer": )" + optimizer + "}";
}

struct RuleCase {
  const char* name;
  std::string optimizer;  // the ds_config's optimizer section
  optim::OptimizerKind kind;
  std::vector<std::string> suffixes;  // the checkpoint's state tensors of a bf16 parameter
  int stage = 0;
};

std::vector<RuleCase> rule_cases() {
  return {
      {"lamb",
       R"({"type": "Lamb", "params": {"lr": 0.01, "weight_decay": 0.01, "bias_correction": false,
           "max_coeff": 0.3, "min_coeff": 0.01}})",
       optim::OptimizerKind::lamb,
       {".exp_avg", ".exp_avg_sq", ".master"},
       3},
      {"lion", R"({"type": "Lion", "params": {"lr": 0.001, "betas": [0.9, 0.99],
                   "weight_decay": 0.1}})",
       optim::OptimizerKind::lion,
       {".exp_avg", ".master"},
       2},
      {"sgd_nesterov", R"({"type": "SGD", "params": {"lr": 0.05, "momentum": 0.9,
                           "nesterov": true, "weight_decay": 0.0001}})",
       optim::OptimizerKind::sgd,
       {".momentum_buffer", ".master"}},
      {"sgd", R"({"type": "sgd", "params": {"lr": 0.05}})", optim::OptimizerKind::sgd, {".master"},
       1},
  };
}

// The state tensors of one parameter in the checkpoint of a run's --out.
std::vector<std::string> suffixes_of(const fs::path& run, const std::string& param) {
  std::vector<std::string> out;
  for (const auto& [name, bytes] : test::checkpoint_tensor_bytes(run))
    if (name.starts_with(param + ".")) out.push_back(name.substr(param.size()));
  std::sort(out.begin(), out.end());
  return out;
}

TEST(TrainerOptimizers, EachRuleTrainsAndResumesBitwise) {
  test::TempDir dir;
  train::TrainConfig base = test::tiny_train_config(dir.path(), DType::bf16);
  base.steps = 3;
  base.schedule.warmup_steps = 1;
  train::TrainConfig adamw = with_ds_config(base, ds_text(R"({"type": "AdamW"})"));
  adamw.paths.out = dir / "adamw";
  train::train(adamw);
  const std::string adamw_model = test::read_bytes(dir / "adamw" / "model" / "model.safetensors");
  for (const RuleCase& k : rule_cases()) {
    SCOPED_TRACE(k.name);
    train::TrainConfig c = with_ds_config(base, ds_text(k.optimizer, k.stage));
    ASSERT_EQ(c.optimizer.kind, k.kind);
    const fs::path straight = dir / (std::string(k.name) + "_straight");
    c.paths.out = straight;
    EXPECT_EQ(train::train(c).steps, 3);
    std::vector<std::string> want = k.suffixes;
    std::sort(want.begin(), want.end());
    EXPECT_EQ(suffixes_of(straight, "model.layers.0.mlp.up_proj.weight"),
              want);
    EXPECT_NE(test::read_bytes(straight / "model" / "model.safetensors"), adamw_model)
        << "the rule changed nothing";

    const fs::path resumed = dir / (std::string(k.name) + "_resumed");
    c.paths.out = resumed;
    c.reporting.save_every = 1;
    train::TrainCallbacks stop;
    stop.on_step = [](int64_t done, int64_t, double) {
      if (done == 2) throw Interrupted();
    };
    EXPECT_THROW(train::train(c, stop), Interrupted);
    c.paths.resume = resumed;
    const int64_t saved = train::read_train_state(c.paths.resume).step;
    EXPECT_GE(saved, 1);
    EXPECT_EQ(train::train(c).steps, 3 - saved);  // resumed, not started again
    EXPECT_EQ(test::read_bytes(straight / "model" / "model.safetensors"),
              test::read_bytes(resumed / "model" / "model.safetensors"));
    EXPECT_TRUE(test::checkpoint_tensor_bytes(straight) == test::checkpoint_tensor_bytes(resumed))
        << "values, masters or the rule's state differ after the resume";
  }
}

TEST(TrainerOptimizers, RefusesWhatARuleCannotRun) {
  test::TempDir dir;
  const train::TrainConfig base = test::tiny_train_config(dir.path(), DType::bf16);
  test::expect_error<ValueError>(
      [&] {
        (void)with_ds_config(base, R"({"train_micro_batch_size_per_gpu": 2,
            "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}},
            "optimizer": {"type": "Lamb"}})");
      },
      {"[config] zero_optimization.offload_optimizer: not supported yet by zerotrain train",
       "Lamb"});
  train::TrainConfig flags = base;
  flags.optimizer.amsgrad = true;
  test::expect_error<ValueError>(
      [&] {
        (void)with_ds_config(flags, ds_text(R"({"type": "Lion"})"), train::GivenFlags{"--amsgrad"});
      },
      {"--amsgrad", "an Adam setting", "Lion"});
  test::expect_error<ValueError>(
      [&] {
        train::validate_train_config(with_ds_config(base, R"({"train_micro_batch_size_per_gpu": 2,
            "zero_optimization": {"stage": 1},
            "bf16": {"enabled": true, "bf16_master_weights_and_grads": true,
                     "bf16_optimizer_states": true},
            "optimizer": {"type": "SGD", "params": {"momentum": 0.9}}})"));
      },
      {"[config] optimizer.type SGD", "low-precision mode", "Adam's alone"});
  // A type DeepSpeed has and zerotrain does not is refused by name when the file is parsed.
  test::expect_error<ValueError>(
      [&] { (void)with_ds_config(base, ds_text(R"({"type": "OneBitLamb"})")); },
      {"optimizer.type", "OneBitLamb", "does not support"});
}

}  // namespace
}  // namespace zt
