// The low-precision mode ([Note: precision modes] in optim/precision.h) in the trainer (the
// optimizer's side: tests/optim/test_flat_adam_low_precision.cpp): it warns once at a tiny lr in
// stage 0 and stage 2 and not in mixed precision, and
// reports a third of the mixed mode's optimizer bytes;
// `--precision` parsing and the ds_config mapping (bf16_master_weights_and_grads +
// bf16_optimizer_states).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "data/temp_dir.h"
#include "support/test_util.h"
#include "train/train_test_util.h"
#include "zerotrain/config/load.h"
#include "zerotrain/core/error.h"
#include "zerotrain/optim/precision.h"
#include "zerotrain/train/ds_train_config.h"

namespace zt {
namespace {

using optim::Precision;

struct TrainRun {
  std::vector<std::string> warnings;
  int64_t optimizer_bytes = 0;
};

// A 4-step trainer run at `lr` (constant after `warmup` steps rising from lr 0): the warnings rank
// 0 got, the optimizer state's bytes.
TrainRun train_run(optim::Precision precision, int stage, double lr = 1e-7, int64_t warmup = 0) {
  test::TempDir dir;
  train::TrainConfig c = test::tiny_train_config(dir.path(), DType::bf16);
  c.paths.out = dir.path() / "out";
  c.steps = 4;
  c.schedule.lr = lr;
  c.schedule.warmup_steps = warmup;
  c.schedule.decay = "constant";
  c.precision.mode = precision;
  c.zero.stage = stage;
  TrainRun out;
  train::TrainCallbacks cb;
  cb.on_warning = [&out](const std::string& l) { out.warnings.push_back(l); };
  out.optimizer_bytes = train::train(c, cb).optimizer_bytes;
  return out;
}

TEST(LowPrecision, TrainerWarnsOnceAtATinyLrInLowPrecisionOnly) {
  for (int stage : {0, 2}) {
    const TrainRun low = train_run(optim::Precision::low, stage);
    ASSERT_EQ(low.warnings.size(), 1u) << "stage " << stage;
    EXPECT_NE(low.warnings[0].find("bf16"), std::string::npos) << low.warnings[0];
    const TrainRun mixed = train_run(optim::Precision::mixed, stage);
    EXPECT_TRUE(mixed.warnings.empty()) << "stage " << stage << ": " << mixed.warnings[0];
    // bf16 moments (4 bytes per parameter) against f32 moments and masters (12).
    EXPECT_EQ(low.optimizer_bytes * 3, mixed.optimizer_bytes) << "stage " << stage;
  }
}

TEST(LowPrecision, TrainerStaysSilentThroughAWarmupFromLrZero) {
  // The first step of a warmup runs at lr 0 and the next ones at a rising lr: nothing vanishes
  // that is meant to move, in either mode.
  for (optim::Precision precision : {optim::Precision::mixed, optim::Precision::low}) {
    const TrainRun r = train_run(precision, 0, 1e-2, 3);
    EXPECT_TRUE(r.warnings.empty()) << r.warnings[0];
  }
}

TEST(LowPrecision, TrainerRejectsLowPrecisionWithF32) {
  test::TempDir dir;
  train::TrainConfig c = test::tiny_train_config(dir.path(), DType::f32);
  c.paths.out = dir.path() / "out";
  c.precision.mode = optim::Precision::low;
  EXPECT_THROW(train::train(c), ValueError);
}

TEST(LowPrecision, ParsesTheModeNames) {
  EXPECT_EQ(optim::parse_precision("low"), optim::Precision::low);
  EXPECT_EQ(optim::parse_precision("mixed"), optim::Precision::mixed);
  EXPECT_EQ(optim::precision_name(optim::Precision::low), "low");
  EXPECT_THROW(optim::parse_precision("fp8"), ValueError);
}

train::TrainConfig apply(const std::string& bf16_section, train::GivenFlags g = {},
                         optim::Precision flag = optim::Precision::mixed) {
  train::TrainConfig c;
  c.precision.mode = flag;
  const std::string text =
      R"({"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 2}, "bf16": )" +
      bf16_section + "}";
  const config::DsConfig ds =
      config::parse_ds_config(text, "test", train::train_overrides(c, g, std::nullopt)).config;
  train::apply_ds_config(ds, g, c);
  return c;
}

TEST(LowPrecision, DsConfigBf16MastersAndOptimizerStatesSelectLowPrecision) {
  EXPECT_EQ(apply(R"({"enabled": true})").precision.mode, optim::Precision::mixed);
  EXPECT_EQ(apply(R"({"enabled": true, "bf16_master_weights_and_grads": true,
                      "bf16_optimizer_states": true})")
                .precision.mode,
            optim::Precision::low);
  try {
    apply(R"({"enabled": true, "bf16_master_weights_and_grads": true})");
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("bf16.bf16_master_weights_and_grads"), std::string::npos)
        << e.what();
  }
  const train::GivenFlags g{"--precision"};
  EXPECT_THROW(apply(R"({"enabled": true, "bf16_master_weights_and_grads": true,
                         "bf16_optimizer_states": true})",
                     g, optim::Precision::mixed),
               ValueError);
}

}  // namespace
}  // namespace zt
