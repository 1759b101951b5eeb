// fp16 training on the CPU with a tiny llama and overflows injected at steps 3, 4 and 9
// (TrainConfig::inject_overflow_steps): the logged per-step loss scale follows DeepSpeed's dynamic
// scaler exactly (2^8, window 2, hysteresis 2), exactly the injected steps are skipped, a skipped
// step leaves the weights, masters, moments, optimizer step count and lr schedule bitwise as they
// were, the model is saved in f16, a static scale stays put (csv_monitor logs it), and a run
// resumed from a mid-run checkpoint continues the scaler (and everything else) exactly; a bad hook
// step or scaler option is a ValueError naming it. See [Note: fp16 step].
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/io_test_util.h"
#include "support/checkpoint_tensors.h"
#include "train/train_test_util.h"
#include "zerotrain/core/error.h"
#include "zerotrain/io/safetensors.h"
#include "zerotrain/train/checkpoint.h"
#include "zerotrain/train/trainer.h"

namespace zt {
namespace {

namespace fs = std::filesystem;

struct Interrupted : std::runtime_error {
  Interrupted() : std::runtime_error("interrupted") {}
};

train::TrainConfig fp16_config(const fs::path& dir) {
  train::TrainConfig c = test::tiny_train_config(dir, DType::f16);
  c.steps = 10;
  // WarmupLR does not depend on the total step count, so runs of different lengths share it.
  c.schedule.deepspeed = config::parse_scheduler_block(
      nlohmann::json::parse(R"({"type": "WarmupLR", "params": {"warmup_min_lr": 0,
      "warmup_max_lr": 0.01, "warmup_num_steps": 8}})"));
  c.precision.loss_scaler.initial_scale_power = 8;
  c.precision.loss_scaler.loss_scale_window = 2;
  c.precision.loss_scaler.hysteresis = 2;
  c.test_hooks.inject_overflow_steps = {3, 4, 9};
  c.paths.out = dir / "run";
  return c;
}

std::vector<nlohmann::json> metrics_lines(const fs::path& path) {
  std::vector<nlohmann::json> out;
  for (const std::string& line : test::text_lines(path))
    out.push_back(nlohmann::json::parse(line));
  return out;
}

std::vector<double> column(const std::vector<nlohmann::json>& lines, const char* key) {
  std::vector<double> out;
  for (const nlohmann::json& j : lines)
    out.push_back(j.at(key).is_null() ? std::nan("") : j.at(key).get<double>());
  return out;
}

TEST(TrainerFp16, LossScaleSequenceAndSkippedStepsFollowDeepSpeed) {
  test::TempDir dir;
  const train::TrainConfig c = fp16_config(dir.path());
  const train::TrainSummary s = train::train(c);
  EXPECT_EQ(s.skipped_steps, 3);
  EXPECT_EQ(s.loss_scale, 256.0);

  const std::vector<nlohmann::json> m = metrics_lines(c.paths.out / "metrics.jsonl");
  ASSERT_EQ(m.size(), 10u);
  // Steps 3 (spends the hysteresis) and 4 (halves) overflow; clean updates at iters 4, 5, 6 reach
  // stable interval 2 at iter 6 (step 7), which doubles; step 9 spends the refilled hysteresis.
  EXPECT_EQ(column(m, "loss_scale"),
            (std::vector<double>{256, 256, 256, 256, 128, 128, 128, 256, 256, 256}));
  EXPECT_EQ(column(m, "skipped"), (std::vector<double>{0, 0, 1, 1, 0, 0, 0, 0, 1, 0}));
  const std::vector<double> norm = column(m, "grad_norm");
  const std::vector<double> lr = column(m, "lr");
  for (size_t i = 0; i < m.size(); ++i) {
    const bool skipped = i == 2 || i == 3 || i == 8;
    EXPECT_EQ(std::isfinite(norm[i]), !skipped) << "step " << i + 1;
    EXPECT_TRUE(std::isfinite(column(m, "loss")[i])) << "step " << i + 1;
  }
  // The schedule advances only after an applied update: steps 3-5 and 9-10 share their lr.
  EXPECT_LT(lr[1], lr[2]);
  EXPECT_EQ(lr[2], lr[3]);
  EXPECT_EQ(lr[3], lr[4]);
  EXPECT_LT(lr[4], lr[5]);
  EXPECT_EQ(lr[8], lr[9]);

  const train::TrainState st = train::read_train_state(c.paths.out);
  EXPECT_EQ(st.loss_scaler, nlohmann::json::parse(R"({"dynamic": true, "cur_scale": 256.0,
      "cur_iter": 10, "last_overflow_iter": 8, "cur_hysteresis": 1})"));
  EXPECT_EQ(st.scheduler.at("last_batch_iteration"), 6);  // 7 updates from -1
  EXPECT_EQ(checkpoint::read_manifest(checkpoint::resolve_checkpoint(c.paths.out)).optimizer_step, 7);
  EXPECT_TRUE(test::checkpoint_tensor_bytes(c.paths.out).contains("model.norm.weight.master"));
  const io::SafetensorsReader model(c.paths.out / "model" / "model.safetensors");
  for (const io::SafetensorsEntry& e : model.entries())
    EXPECT_EQ(e.dtype, io::StDType::F16) << e.name;
}

TEST(TrainerFp16, SkippedStepLeavesWeightsOptimizerStateAndScheduleUnchanged) {
  test::TempDir dir;
  train::TrainConfig c = fp16_config(dir.path());
  c.steps = 5;
  c.reporting.save_every = 1;
  c.reporting.keep_checkpoints = 5;  // every step's checkpoint stays
  train::train(c);
  auto ckpt = [&](int step) {
    return c.paths.out / checkpoint::kCheckpointsDirName / checkpoint::tag_for_step(step);
  };
  // Values, masters and moments.
  auto bytes = [&](int step) { return test::checkpoint_tensor_bytes(ckpt(step)); };
  auto state = [&](int step) { return train::read_train_state(ckpt(step)); };
  for (int skipped : {3, 4}) {
    EXPECT_TRUE(bytes(skipped) == bytes(2))
        << "weights, masters or moments changed at skipped step " << skipped;
    EXPECT_EQ(state(skipped).scheduler, state(2).scheduler) << "step " << skipped;
  }
  EXPECT_NE(state(3).loss_scaler, state(2).loss_scaler);  // the scaler did update
  // The update after the skips changes everything again.
  EXPECT_TRUE(bytes(5) != bytes(4));
  EXPECT_NE(state(5).scheduler, state(4).scheduler);
}

// bf16 (no scaler): a non-finite gradient always skips the update; with check_grad_overflow
// (DeepSpeed's default in a ds_config) the scheduler does not step either, as after an fp16
// overflow.
TEST(TrainerFp16, Bf16CheckGradOverflowSkipsTheSchedulerStepToo) {
  for (bool check : {false, true}) {
    test::TempDir dir;
    train::TrainConfig c = fp16_config(dir.path());
    c.precision.dtype = DType::bf16;
    c.precision.check_grad_overflow = check;
    c.faults.on_nonfinite = train::NonFinitePolicy::skip;  // the default stops (fault_config.h)
    c.steps = 5;
    c.test_hooks.inject_overflow_steps = {3};
    const train::TrainSummary s = train::train(c);
    EXPECT_EQ(s.skipped_steps, 1) << "check " << check;
    const std::vector<nlohmann::json> m = metrics_lines(c.paths.out / "metrics.jsonl");
    ASSERT_EQ(m.size(), 5u);
    const std::vector<double> lr = column(m, "lr");
    EXPECT_FALSE(std::isfinite(column(m, "grad_norm")[2]));
    EXPECT_LT(lr[1], lr[2]);
    if (check)
      EXPECT_EQ(lr[2], lr[3]) << "the skipped step advanced the schedule";
    else
      EXPECT_LT(lr[2], lr[3]);
    const train::TrainState st = train::read_train_state(c.paths.out);
    EXPECT_EQ(st.scheduler.at("last_batch_iteration"), check ? 3 : 4) << "check " << check;
  }
}

TEST(TrainerFp16, StaticScaleStaysAndStillSkipsOverflows) {
  test::TempDir dir;
  train::TrainConfig c = fp16_config(dir.path());
  c.steps = 4;
  c.precision.loss_scaler.loss_scale = 64;
  c.test_hooks.inject_overflow_steps = {2};
  c.reporting.csv_monitor_dir = dir / "monitor";
  const train::TrainSummary s = train::train(c);
  EXPECT_EQ(s.skipped_steps, 1);
  const std::vector<nlohmann::json> m = metrics_lines(c.paths.out / "metrics.jsonl");
  EXPECT_EQ(column(m, "loss_scale"), (std::vector<double>{64, 64, 64, 64}));
  EXPECT_EQ(column(m, "skipped"), (std::vector<double>{0, 1, 0, 0}));
  EXPECT_EQ(train::read_train_state(c.paths.out).loss_scaler,
            nlohmann::json::parse(R"({"dynamic": false, "cur_scale": 64.0})"));
  // DeepSpeed's csv_monitor has a loss_scale file with fp16 (x axis: samples, 4 per step).
  EXPECT_EQ(test::text_lines(c.reporting.csv_monitor_dir / "Train_Samples_loss_scale.csv"),
            (std::vector<std::string>{"step,loss_scale", "4,64", "8,64", "12,64", "16,64"}));
}

TEST(TrainerFp16, ResumeContinuesTheScalerExactly) {
  test::TempDir dir;
  train::TrainConfig c = fp16_config(dir.path());
  std::vector<double> straight, resumed;
  c.paths.out = dir / "straight";
  train::TrainCallbacks rec;
  rec.on_step = [&](int64_t, int64_t, double loss) { straight.push_back(loss); };
  train::train(c, rec);

  // Saved after step 5 (scale 128, hysteresis spent); the doubling at step 7 needs the restored
  // iteration counters.
  c.paths.out = dir / "resumed";
  c.reporting.save_every = 5;
  train::TrainCallbacks stop;
  stop.on_step = [](int64_t done, int64_t, double) {
    if (done == 6) throw Interrupted();
  };
  EXPECT_THROW(train::train(c, stop), Interrupted);
  c.paths.resume = c.paths.out;
  rec.on_step = [&](int64_t, int64_t, double loss) { resumed.push_back(loss); };
  EXPECT_EQ(train::train(c, rec).steps, 5);
  ASSERT_EQ(resumed.size(), 5u);
  for (size_t i = 0; i < 5; ++i)
    EXPECT_EQ(resumed[i], straight[i + 5]) << "step " << i + 6;
  const std::vector<nlohmann::json> a = metrics_lines(dir / "straight" / "metrics.jsonl");
  const std::vector<nlohmann::json> b = metrics_lines(dir / "resumed" / "metrics.jsonl");
  EXPECT_EQ(column(a, "loss_scale"), column(b, "loss_scale"));
  EXPECT_EQ(column(a, "skipped"), column(b, "skipped"));
  EXPECT_EQ(test::read_bytes(dir / "straight" / "model" / "model.safetensors"),
            test::read_bytes(dir / "resumed" / "model" / "model.safetensors"));
  EXPECT_EQ(test::checkpoint_tensor_bytes(dir / "straight"),
            test::checkpoint_tensor_bytes(dir / "resumed"));
  EXPECT_EQ(train::read_train_state(dir / "straight").loss_scaler,
            train::read_train_state(dir / "resumed").loss_scaler);
}

TEST(TrainerFp16, BadHookOrScalerOptionsAreNamed) {
  test::TempDir dir;
  train::TrainConfig c = fp16_config(dir.path());
  c.test_hooks.inject_overflow_steps = {0};
  test::expect_error<ValueError>([&] { train::train(c); }, {"inject_overflow_steps", "0"});
  c.test_hooks.inject_overflow_steps = {};
  c.precision.loss_scaler.hysteresis = 0;
  test::expect_error<ValueError>([&] { train::train(c); }, {"[loss_scaler]", "hysteresis", "0"});
}

}  // namespace
}  // namespace zt
