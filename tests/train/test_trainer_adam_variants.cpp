// The trainer with DeepSpeed's Adam variants from a ds_config (the path `zerotrain train
// --deepspeed` takes): {"type": "Adam", "params": {"adam_w_mode": false, "weight_decay": 0.1,
// "amsgrad": true}} trains a tiny llama, its checkpoint holds max_exp_avg_sq and it ends elsewhere
// than the AdamW run of the same file without those keys; amsgrad with the low-precision mode is
// refused when the config is applied and, for a TrainConfig built by hand, before training.
// The flat Adam's variants step by step: tests/optim/test_adam_variants.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "io/io_test_util.h"
#include "support/checkpoint_tensors.h"
#include "train/train_test_util.h"
#include "zerotrain/config/load.h"
#include "zerotrain/core/error.h"
#include "zerotrain/io/safetensors.h"
#include "zerotrain/train/ds_train_config.h"
#include "zerotrain/train/trainer.h"

namespace zt {
namespace {

namespace fs = std::filesystem;

// `c` with the ds_config text applied (no flags given).
train::TrainConfig with_ds_config(train::TrainConfig c, const std::string& text) {
  const train::GivenFlags g;
  const config::DsConfig ds =
      config::parse_ds_config(text, "test", train::train_overrides(c, g, std::nullopt)).config;
  train::apply_ds_config(ds, g, c);
  return c;
}

std::string ds_text(const std::string& params) {
  return R"({"train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 2,
             "optimizer": {"type": "Adam", "params": )" +
         params + "}}";
}

TEST(TrainerAdamVariants, DsConfigL2AmsgradAdamTrains) {
  test::TempDir dir;
  const train::TrainConfig base = test::tiny_train_config(dir.path(), DType::f32);
  train::TrainConfig c = with_ds_config(
      base, ds_text(R"({"lr": 0.01, "adam_w_mode": false, "weight_decay": 0.1, "amsgrad": true})"));
  ASSERT_FALSE(c.optimizer.adam_w_mode);
  ASSERT_TRUE(c.optimizer.amsgrad);
  c.paths.out = dir / "adam";
  EXPECT_EQ(train::train(c).steps, 6);
  train::TrainConfig w = with_ds_config(base, ds_text(R"({"lr": 0.01, "weight_decay": 0.1})"));
  ASSERT_TRUE(w.optimizer.adam_w_mode);
  w.paths.out = dir / "adamw";
  train::train(w);

  // The optimizer state's names (the checkpoint also holds each parameter's value by its name).
  const auto state_names = [](const fs::path& out) {
    std::vector<std::string> names;
    for (const auto& [name, bytes] : test::checkpoint_tensor_bytes(out))
      if (name.ends_with(".exp_avg") || name.ends_with("exp_avg_sq") || name.ends_with(".master"))
        names.push_back(name);
    return names;
  };
  const std::vector<std::string> names = state_names(dir / "adam");
  const std::vector<std::string> adamw_names = state_names(dir / "adamw");
  int maxes = 0;
  for (const std::string& name : adamw_names)
    if (name.ends_with(".exp_avg_sq")) {
      const std::string max = name.substr(0, name.size() - 11) + ".max_exp_avg_sq";
      maxes += std::count(names.begin(), names.end(), max) == 1;
    }
  EXPECT_GT(maxes, 0);
  EXPECT_EQ(2 * names.size(), 3 * adamw_names.size());  // f32: 3 states per parameter, not 2
  EXPECT_EQ(3 * maxes, static_cast<int>(names.size()));
  EXPECT_NE(test::read_bytes(dir / "adam" / "model" / "model.safetensors"),
            test::read_bytes(dir / "adamw" / "model" / "model.safetensors"));
}

TEST(TrainerAdamVariants, AmsgradWithLowPrecisionFailsBeforeTraining) {
  test::TempDir dir;
  train::TrainConfig base = test::tiny_train_config(dir.path(), DType::bf16);
  test::expect_error<ValueError>(
      [&] {
        train::validate_train_config(with_ds_config(base, R"({"train_micro_batch_size_per_gpu": 2,
            "zero_optimization": {"stage": 2},
            "bf16": {"enabled": true, "bf16_master_weights_and_grads": true,
                     "bf16_optimizer_states": true},
            "optimizer": {"type": "Adam", "params": {"amsgrad": true}}})"));
      },
      {"[config] optimizer.params.amsgrad", "low-precision"});
  train::TrainConfig c = base;
  c.precision.mode = optim::Precision::low;
  c.optimizer.amsgrad = true;
  c.paths.out = dir / "low";
  test::expect_error<ValueError>([&] { train::train(c); }, {"amsgrad", "precision low"});
  EXPECT_FALSE(fs::exists(c.paths.out / "metrics.jsonl"));
}

}  // namespace
}  // namespace zt
