// The trainer's checkpoint and --resume on the CPU, with a tiny llama and a small token file: a run
// interrupted during step 5 (its checkpoint saved at step 3 by save_every, step 4 logged) and
// resumed to step 6 (also in low precision, and Adam with L2 decay and amsgrad) matches a straight
// 6-step run bit for bit (every step's loss, the metrics.jsonl lines with step 4 logged once, the
// final weights and optimizer state); a resume with another seq_len, or from a directory without
// the COMPLETE marker, is refused. The interruption is an exception from on_step: `steps` is the
// schedule's total, so a run that stops early must be one that was asked for all 6 steps.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/io_test_util.h"
#include "nn/nn_test_util.h"
#include "support/checkpoint_tensors.h"
#include "train/train_test_util.h"
#include "zerotrain/config/scheduler_config.h"
#include "zerotrain/core/error.h"
#include "zerotrain/data/token_file.h"
#include "zerotrain/io/hf_config.h"
#include "zerotrain/train/checkpoint.h"
#include "zerotrain/train/trainer.h"

namespace zt {
namespace {

namespace fs = std::filesystem;

struct Interrupted : std::runtime_error {
  Interrupted() : std::runtime_error("interrupted") {}
};

train::TrainConfig make_config(const fs::path& dir, DType dtype) {
  return test::tiny_train_config(dir, dtype);
}

// Every step's exact loss, from on_step.
train::TrainCallbacks record_losses(std::vector<double>& losses, int64_t stop_after = 0) {
  train::TrainCallbacks cb;
  cb.on_step = [&losses, stop_after](int64_t done, int64_t, double loss) {
    losses.push_back(loss);
    if (done == stop_after) throw Interrupted();
  };
  return cb;
}

std::vector<nlohmann::json> metrics_lines(const fs::path& path) {
  std::ifstream in(path);
  std::vector<nlohmann::json> out;
  for (std::string line; std::getline(in, line);)
    out.push_back(nlohmann::json::parse(line));
  return out;
}

// `adjust` changes the config of all three runs (an optimizer variant).
void expect_resume_matches_straight_run(
    DType dtype, const nlohmann::json& scheduler = {},
    optim::Precision precision = optim::Precision::mixed, int zero_stage = 0,
    const std::function<void(train::TrainConfig&)>& adjust = {}) {
  test::TempDir dir;
  train::TrainConfig c = make_config(dir.path(), dtype);
  if (!scheduler.is_null()) c.schedule.deepspeed = config::parse_scheduler_block(scheduler);
  c.precision.mode = precision;
  c.zero.stage = zero_stage;
  if (adjust) adjust(c);

  std::vector<double> straight;
  c.paths.out = dir / "straight";
  train::train(c, record_losses(straight));
  ASSERT_EQ(straight.size(), 6u);

  std::vector<double> interrupted, resumed;
  c.paths.out = dir / "resumed";
  c.reporting.save_every = 3;
  EXPECT_THROW(train::train(c, record_losses(interrupted, 4)), Interrupted);
  ASSERT_EQ(interrupted.size(), 4u);
  EXPECT_EQ(metrics_lines(c.paths.out / "metrics.jsonl").size(), 4u);
  const fs::path ckpt = checkpoint::resolve_checkpoint(c.paths.out);
  EXPECT_EQ(ckpt, c.paths.out / "checkpoints" / "step-00000003");
  EXPECT_TRUE(fs::exists(ckpt / "COMPLETE"));
  EXPECT_FALSE(fs::exists(c.paths.out / "model"));  // the interrupted run never reached its end

  c.paths.resume = ckpt;
  const train::TrainSummary s = train::train(c, record_losses(resumed));
  EXPECT_EQ(s.steps, 3);
  ASSERT_EQ(resumed.size(), 3u);
  for (size_t i = 0; i < 4; ++i)
    EXPECT_EQ(interrupted[i], straight[i]) << "step " << i + 1;
  for (size_t i = 0; i < 3; ++i)
    EXPECT_EQ(resumed[i], straight[i + 3]) << "step " << i + 4;

  const std::vector<nlohmann::json> a = metrics_lines(dir / "straight" / "metrics.jsonl");
  const std::vector<nlohmann::json> b = metrics_lines(dir / "resumed" / "metrics.jsonl");
  ASSERT_EQ(a.size(), 6u);
  ASSERT_EQ(b.size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(b[i]["step"], static_cast<int64_t>(i + 1));
    EXPECT_EQ(a[i]["loss"], b[i]["loss"]) << "step " << i + 1;
    EXPECT_EQ(a[i]["lr"], b[i]["lr"]) << "step " << i + 1;
  }

  EXPECT_EQ(test::read_bytes(dir / "straight" / "model" / "model.safetensors"),
            test::read_bytes(dir / "resumed" / "model" / "model.safetensors"));
  EXPECT_EQ(test::checkpoint_tensor_bytes(dir / "straight"),
            test::checkpoint_tensor_bytes(dir / "resumed"));
  const train::TrainState st = train::read_train_state(dir / "resumed");
  EXPECT_EQ(st.step, 6);
  EXPECT_EQ(st.scheduler, train::read_train_state(dir / "straight").scheduler);
  EXPECT_EQ(st.scheduler.at("last_batch_iteration"), 5);  // six updates from -1

  // metrics.csv: one header, the resumed run's rows replace the interrupted run's step 4.
  const std::vector<std::string> csv = test::text_lines(dir / "resumed" / "metrics.csv");
  ASSERT_EQ(csv.size(), 7u);
  EXPECT_EQ(csv[0].rfind("step,loss,lr,", 0), 0u) << csv[0];
  for (size_t i = 1; i < 7; ++i)
    EXPECT_EQ(csv[i].substr(0, csv[i].find(',')), std::to_string(i));
  EXPECT_EQ(st.data, train::read_train_state(dir / "straight").data);
}

TEST(TrainerResume, InterruptedAndResumedRunMatchesAStraightRunF32) {
  expect_resume_matches_straight_run(DType::f32);
}

TEST(TrainerResume, InterruptedAndResumedRunMatchesAStraightRunBf16) {
  expect_resume_matches_straight_run(DType::bf16);
}

// Low precision (bf16 moments in the checkpoint, no masters) in stage 2: the checkpoint's moments
// are read back as f32 and each rank's flat Adam casts its shard of them to bf16.
TEST(TrainerResume, InterruptedAndResumedRunMatchesAStraightRunBf16LowPrecisionStage2) {
  expect_resume_matches_straight_run(DType::bf16, {}, optim::Precision::low, 2);
}

// Adam with L2 weight decay and amsgrad in stage 1: the checkpoint holds every max_exp_avg_sq
// (gathered from the shards), and the flat Adam copies its shard of them back in.
TEST(TrainerResume, AmsgradL2AdamStage1ContinuesExactly) {
  expect_resume_matches_straight_run(DType::f32, {}, optim::Precision::mixed, 1,
                                     [](train::TrainConfig& c) {
                                       c.optimizer.adam_w_mode = false;
                                       c.optimizer.amsgrad = true;
                                     });
}

// A DeepSpeed WarmupDecayLR schedule (from --deepspeed) continues exactly after a resume: the
// scheduler's state is in the checkpoint.
TEST(TrainerResume, DeepSpeedScheduleContinuesExactly) {
  expect_resume_matches_straight_run(DType::f32, nlohmann::json::parse(R"({"type": "WarmupDecayLR",
      "params": {"total_num_steps": 6, "warmup_min_lr": 0.001, "warmup_max_lr": 0.02,
                 "warmup_num_steps": 3}})"));
}

TEST(TrainerResume, RefusesAnotherSeqLenOrAnIncompleteCheckpoint) {
  test::TempDir dir;
  train::TrainConfig c = make_config(dir.path(), DType::f32);
  c.steps = 2;
  c.paths.out = dir / "run";
  train::train(c);
  const fs::path ckpt = checkpoint::resolve_checkpoint(c.paths.out);

  train::TrainConfig r = c;
  r.steps = 4;
  r.paths.resume = ckpt;
  r.data.seq_len = 4;
  test::expect_error<ValueError>([&] { train::train(r); }, {"seq_len", "4", "8", ckpt.string()});
  r.data.seq_len = c.data.seq_len;
  r.data.seed = 8;
  test::expect_error<ValueError>([&] { train::train(r); }, {"seed", "8", "7"});
  r.data.seed = c.data.seed;
  r.steps = 2;
  test::expect_error<ValueError>([&] { train::train(r); }, {"steps", "step 2"});

  const fs::path partial = dir / "partial";
  fs::copy(ckpt, partial, fs::copy_options::recursive);
  fs::remove(partial / "COMPLETE");
  r.steps = 4;
  r.paths.resume = partial;
  test::expect_error<ValueError>([&] { train::train(r); }, {"COMPLETE", partial.string()});
}

}  // namespace
}  // namespace zt
