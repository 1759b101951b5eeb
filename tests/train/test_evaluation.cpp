// Evaluation on a held-out token file ([Note: evaluation] in src/zerotrain/train/evaluation.h), in
// one process on the CPU with a tiny llama: the loss equals a direct computation (the forward's
// mean loss over the same rows) with and without masked (-100) targets; --eval-batches picks the
// first K micro-batches; a run with evaluations gives bitwise the losses, weights and checkpoint
// of the run without (stages 0 and 3) and writes its eval records; a resumed run's evaluations
// equal the uninterrupted run's; --eval-only trains and writes nothing; and each bad setting or
// file is one line naming it.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/io_test_util.h"
#include "nn/nn_test_util.h"
#include "support/checkpoint_tensors.h"
#include "support/token_fixture.h"
#include "train/train_test_util.h"
#include "zerotrain/core/error.h"
#include "zerotrain/data/data_loader.h"
#include "zerotrain/nn/block_runner.h"
#include "zerotrain/train/checkpoint.h"
#include "zerotrain/train/evaluation.h"
#include "zerotrain/train/trainer.h"

namespace zt {
namespace {

namespace fs = std::filesystem;

// The tiny training setup plus a held-out file of 150 tokens: 18 sequences of 8 + 1 tokens.
train::TrainConfig config_with_eval(const fs::path& dir) {
  train::TrainConfig c = test::tiny_train_config(dir, DType::f32);
  test::write_random_tokens(dir / "eval.bin", test::tiny_config(nn::Family::llama).vocab_size, 150,
                            0x2545F4914F6CDD1Dull);
  c.eval.data = dir / "eval.bin";
  return c;
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

std::vector<nlohmann::json> lines_of(const fs::path& path) {
  std::vector<nlohmann::json> out;
  for (const std::string& line : test::text_lines(path))
    out.push_back(nlohmann::json::parse(line));
  return out;
}

// Every step's exact loss, from on_step; throws after step `stop_after` (0: never).
struct Interrupted : std::runtime_error {
  Interrupted() : std::runtime_error("interrupted") {}
};
train::TrainCallbacks record_losses(std::vector<double>& losses, int64_t stop_after = 0) {
  train::TrainCallbacks cb;
  cb.on_step = [&losses, stop_after](int64_t done, int64_t, double loss) {
    losses.push_back(loss);
    if (done == stop_after) throw Interrupted();
  };
  return cb;
}

TEST(Evaluation, SumTokenLossesSkipsMaskedTargets) {
  const Tensor losses = Tensor::from_floats({1.5f, 2.0f, 3.25f, 4.0f}, {4}, DType::f32);
  const Tensor targets = Tensor::from_ints({5, -100, 7, -100}, {4}, DType::i32);
  const train::TokenLossSum s = train::sum_token_losses(losses, targets);
  EXPECT_EQ(s.sum, 4.75);
  EXPECT_EQ(s.tokens, 2);
  const Tensor all_masked = Tensor::from_ints({-100, -100, -100, -100}, {4}, DType::i64);
  EXPECT_EQ(train::sum_token_losses(losses, all_masked).tokens, 0);
  EXPECT_NE(error_of([&] {
              train::sum_token_losses(Tensor::from_floats({1.0f}, {1}, DType::f32), targets);
            }).find("[eval] sum_token_losses"),
            std::string::npos);
}

// The per-token losses of the forward-only pass, summed over the targets that are not -100,
// give the head's own mean loss (make_step masks every 5th target); masked tokens count 0.
TEST(Evaluation, ForwardTokenLossesMatchTheHeadsMeanWithMaskedTargets) {
  for (nn::Family family : {nn::Family::llama, nn::Family::gpt2}) {
    const nn::ModelConfig mc = test::tiny_config(family);
    nn::Transformer model(mc, {});
    model.init_random(3);
    const nn::StepContext ctx = test::make_step(mc, 3, 8, 41);
    const double mean = test::model_loss(model, ctx);
    const Tensor losses = train::forward_token_losses(model.blocks(), {}, ctx);
    ASSERT_EQ(losses.numel(), 24);
    const train::TokenLossSum s = train::sum_token_losses(losses, ctx.targets.flatten());
    const std::vector<float> per_token = losses.to_floats();
    const Tensor targets = ctx.targets.to(Device::cpu());
    int64_t masked = 0;
    for (int64_t i = 0; i < 24; ++i)
      if ((targets.dtype() == DType::i32 ? int64_t{targets.data_as<int32_t>()[i]}
                                         : targets.data_as<int64_t>()[i]) == -100) {
        EXPECT_EQ(per_token[static_cast<size_t>(i)], 0.0f);
        ++masked;
      }
    ASSERT_GT(masked, 0);
    EXPECT_EQ(s.tokens, 24 - masked);
    EXPECT_NEAR(s.sum / static_cast<double>(s.tokens), mean, 1e-6 * mean)
        << nn::family_name(family);
  }
}

// --eval-only on the seeded init: the loss of all 18 sequences (5 micro-batches of 4, the last of
// 2) equals the forward's mean loss per batch weighted by its tokens; --eval-batches 2 takes the
// first 8 sequences.
TEST(Evaluation, LossEqualsTheForwardsMeanOverTheSameRows) {
  test::TempDir dir;
  train::TrainConfig c = config_with_eval(dir.path());
  c.data.micro_batch = 4;
  c.eval.only = true;
  c.paths.data.clear();  // not needed
  const train::TrainSummary s = train::train(c);
  ASSERT_EQ(s.evals.size(), 1u);
  EXPECT_EQ(s.evals[0].step, 0);
  EXPECT_EQ(s.evals[0].sequences, 18);
  EXPECT_EQ(s.evals[0].tokens, 18 * 8);
  EXPECT_FALSE(fs::exists(dir / "out"));

  const nn::ModelConfig mc = test::tiny_config(nn::Family::llama);
  nn::Transformer model(mc, {});
  model.init_random(c.data.seed);
  data::DataLoaderConfig dc;
  dc.seq_len = 8;
  dc.micro_batch = 4;
  dc.shuffle = false;
  dc.drop_last = false;
  data::DataLoader loader(std::make_shared<data::TokenFile>(c.eval.data), dc);
  double weighted = 0, tokens = 0, first_two = 0;
  for (int j = 0; j < 5; ++j) {
    const data::Batch b = loader.next();
    EXPECT_EQ(b.rows, j < 4 ? 4 : 2);
    nn::StepContext ctx;
    ctx.tokens = b.inputs;
    ctx.targets = b.targets;
    const double n = static_cast<double>(b.rows * 8);
    weighted += test::model_loss(model, ctx) * n;
    tokens += n;
    if (j == 1) first_two = weighted / tokens;
  }
  EXPECT_NEAR(s.evals[0].loss, weighted / tokens, 2e-6 * s.evals[0].loss);
  EXPECT_DOUBLE_EQ(s.evals[0].perplexity, std::exp(s.evals[0].loss));

  c.eval.batches = 2;
  const train::TrainSummary two = train::train(c);
  EXPECT_EQ(two.evals[0].sequences, 8);
  EXPECT_EQ(two.evals[0].tokens, 64);
  EXPECT_NEAR(two.evals[0].loss, first_two, 2e-6 * first_two);
  c.eval.batches = 99;  // more than the file holds: all of it
  EXPECT_EQ(train::train(c).evals[0].loss, s.evals[0].loss);
}

// Evaluating after steps 2, 4 and 6 changes nothing of training, in stage 0 and in stage 3 (whose
// forward-only pass gathers and releases the groups): every loss, the final weights and the
// checkpoint are bitwise those of the run without; the eval records and loss.png are written.
TEST(Evaluation, TrainingWithEvaluationsIsBitwiseTheRunWithout) {
  for (int stage : {0, 3}) {
    test::TempDir dir;
    train::TrainConfig c = config_with_eval(dir.path());
    c.zero.stage = stage;
    c.eval.every = 2;
    std::vector<double> with, without;
    std::vector<int64_t> eval_steps;
    train::TrainCallbacks cb = record_losses(with);
    cb.on_eval = [&eval_steps](const monitor::EvalMetrics& e) { eval_steps.push_back(e.step); };
    c.paths.out = dir / "with";
    const train::TrainSummary s = train::train(c, cb);
    train::TrainConfig plain = c;
    plain.eval = {};
    plain.paths.out = dir / "without";
    const train::TrainSummary p = train::train(plain, record_losses(without));

    ASSERT_EQ(with.size(), 6u);
    EXPECT_EQ(with, without) << "stage " << stage;
    EXPECT_EQ(test::read_bytes(dir / "with" / "model" / "model.safetensors"),
              test::read_bytes(dir / "without" / "model" / "model.safetensors"))
        << "stage " << stage;
    EXPECT_EQ(test::checkpoint_tensor_bytes(dir / "with"),
              test::checkpoint_tensor_bytes(dir / "without"))
        << "stage " << stage;
    EXPECT_EQ(eval_steps, (std::vector<int64_t>{2, 4, 6}));
    ASSERT_EQ(s.evals.size(), 3u);
    EXPECT_TRUE(p.evals.empty());
    EXPECT_NE(s.evals[2].loss, s.evals[0].loss);

    // metrics.jsonl: the step records as without, and an eval record after steps 2, 4 and 6.
    const std::vector<nlohmann::json> a = lines_of(dir / "with" / "metrics.jsonl");
    const std::vector<nlohmann::json> b = lines_of(dir / "without" / "metrics.jsonl");
    ASSERT_EQ(a.size(), 9u);
    std::vector<nlohmann::json> steps, evals;
    for (const nlohmann::json& j : a)
      (j.contains("type") ? evals : steps).push_back(j);
    ASSERT_EQ(steps.size(), 6u);
    for (size_t i = 0; i < 6; ++i)
      EXPECT_EQ(steps[i]["loss"], b[i]["loss"]);
    ASSERT_EQ(evals.size(), 3u);
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_EQ(evals[i]["type"], "eval");
      EXPECT_EQ(evals[i]["step"], 2 * (i + 1));
      EXPECT_EQ(evals[i]["eval_tokens"], 18 * 8);
      EXPECT_NEAR(evals[i]["eval_loss"].get<double>(), s.evals[i].loss, 1e-8 * s.evals[i].loss);
    }
    EXPECT_EQ(a[2]["type"], "eval");  // right after step 2's record
    // metrics.csv: the same 9 rows under one header, eval_loss filled on the evaluations' rows.
    const std::vector<std::string> csv = test::text_lines(dir / "with" / "metrics.csv");
    ASSERT_EQ(csv.size(), 10u);
    EXPECT_NE(csv[0].find(",eval_loss,eval_perplexity,eval_tokens,eval_sequences,eval_seconds"),
              std::string::npos)
        << csv[0];
    EXPECT_EQ(csv[3].rfind("2,,", 0), 0u) << csv[3];  // step 2's evaluation: no training columns
    EXPECT_EQ(test::text_lines(dir / "without" / "metrics.csv")[0].find("eval_loss"),
              std::string::npos);
    EXPECT_TRUE(fs::exists(dir / "with" / "loss.png"));
  }
}

// Without --eval-every: one evaluation, after the last step.
TEST(Evaluation, WithoutEvalEveryItRunsAfterTheLastStep) {
  test::TempDir dir;
  train::TrainConfig c = config_with_eval(dir.path());
  c.paths.out = dir / "out";
  c.eval.batches = 1;
  const train::TrainSummary s = train::train(c);
  ASSERT_EQ(s.evals.size(), 1u);
  EXPECT_EQ(s.evals[0].step, 6);
  EXPECT_EQ(s.evals[0].sequences, 2);
}

// Interrupted during step 5 (checkpoint at step 3, its evaluation after step 4 already logged),
// resumed to 6: the evaluations after steps 4 and 6 equal the uninterrupted run's bit for bit, and
// metrics.jsonl holds each eval record once; --eval-only on the checkpoint gives step 3's loss.
TEST(Evaluation, AResumedRunsEvaluationsEqualTheUninterruptedRuns) {
  test::TempDir dir;
  train::TrainConfig c = config_with_eval(dir.path());
  c.eval.every = 2;
  c.paths.out = dir / "straight";
  std::vector<double> losses;
  const train::TrainSummary straight = train::train(c, record_losses(losses));
  ASSERT_EQ(straight.evals.size(), 3u);

  c.paths.out = dir / "resumed";
  c.reporting.save_every = 3;
  EXPECT_THROW(train::train(c, record_losses(losses, 4)), Interrupted);
  c.paths.resume = c.paths.out;
  const train::TrainSummary resumed = train::train(c);
  ASSERT_EQ(resumed.evals.size(), 2u);
  EXPECT_EQ(resumed.evals[0].step, 4);
  EXPECT_EQ(resumed.evals[0].loss, straight.evals[1].loss);
  EXPECT_EQ(resumed.evals[1].step, 6);
  EXPECT_EQ(resumed.evals[1].loss, straight.evals[2].loss);

  std::vector<int64_t> eval_steps;
  for (const nlohmann::json& j : lines_of(dir / "resumed" / "metrics.jsonl"))
    if (j.contains("type")) eval_steps.push_back(j["step"].get<int64_t>());
  EXPECT_EQ(eval_steps, (std::vector<int64_t>{2, 4, 6}));

  // The checkpoint of step 6, evaluated alone at another micro-batch and ZeRO stage.
  train::TrainConfig only = c;
  only.eval.only = true;
  only.paths.resume = dir / "straight";
  only.data.micro_batch = 5;
  only.zero.stage = 3;
  const train::TrainSummary e = train::train(only);
  ASSERT_EQ(e.evals.size(), 1u);
  EXPECT_EQ(e.evals[0].step, 6);
  EXPECT_NEAR(e.evals[0].loss, straight.evals[2].loss, 2e-6 * straight.evals[2].loss);
}

TEST(Evaluation, BadSettingsAreOneLineEach) {
  train::EvalConfig e;
  e.data = "eval.bin";
  e.every = 0;
  EXPECT_EQ(error_of([&] { train::validate_eval_config(e); }),
            "[config] --eval-every: must be > 0, got 0");
  e.every = -3;
  EXPECT_EQ(error_of([&] { train::validate_eval_config(e); }),
            "[config] --eval-every: must be > 0, got -3");
  e.every = 5;
  e.batches = 0;
  EXPECT_EQ(error_of([&] { train::validate_eval_config(e); }),
            "[config] --eval-batches: must be > 0, got 0");
  e.batches.reset();
  EXPECT_EQ(error_of([&] { train::validate_eval_config(e); }), "no error");
  e.data.clear();
  EXPECT_EQ(error_of([&] { train::validate_eval_config(e); }),
            "[config] --eval-every 5: there is no --eval-data");
  e.every.reset();
  e.only = true;
  EXPECT_EQ(error_of([&] { train::validate_eval_config(e); }),
            "[config] --eval-only: there is no --eval-data");
}

TEST(Evaluation, BadEvalFilesAreOneLineEach) {
  test::TempDir dir;
  const nn::ModelConfig mc = test::tiny_config(nn::Family::llama);
  train::DataConfig d;
  d.seq_len = 8;
  d.micro_batch = 2;
  train::EvalConfig e;

  e.data = dir / "empty.bin";
  {
    data::TokenFileWriter w(e.data, static_cast<uint64_t>(mc.vocab_size), std::nullopt);
    w.finish();
  }
  EXPECT_EQ(error_of([&] { train::Evaluator(e, d, mc, 0, 1); }),
            str("[train] --eval-data ", e.data.string(), " is empty (0 tokens)"));

  e.data = dir / "short.bin";
  test::write_random_tokens(e.data, mc.vocab_size, 8, 5);
  EXPECT_EQ(error_of([&] { train::Evaluator(e, d, mc, 0, 1); }),
            str("[train] --eval-data ", e.data.string(),
                " (8 tokens) holds no sequence of --seq-len 8 + 1 tokens"));

  e.data = dir / "wide.bin";
  test::write_random_tokens(e.data, mc.vocab_size + 14, 100, 5);
  EXPECT_EQ(error_of([&] { train::Evaluator(e, d, mc, 0, 1); }),
            str("[train] --eval-data ", e.data.string(),
                " has vocab size 64 but the model's "
                "vocab_size is 50"));

  // The same check as the training file's: through train(), before anything is built.
  train::TrainConfig c = config_with_eval(dir.path());
  c.eval.data = e.data;
  c.paths.out = dir / "out";
  EXPECT_NE(error_of([&] { train::train(c); }).find("--eval-data"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir / "out"));
}

TEST(Evaluation, DescribeSaysWhichSequences) {
  test::TempDir dir;
  const nn::ModelConfig mc = test::tiny_config(nn::Family::llama);
  train::DataConfig d;
  d.seq_len = 8;
  d.micro_batch = 4;
  train::EvalConfig e;
  e.data = dir / "eval.bin";
  test::write_random_tokens(e.data, mc.vocab_size, 150, 9);
  EXPECT_EQ(train::Evaluator(e, d, mc, 0, 1).describe(),
            "all 18 sequences of 9 tokens (5 micro-batches of 4)");
  e.batches = 2;
  EXPECT_EQ(train::Evaluator(e, d, mc, 1, 2).describe(),
            "the first 2 micro-batches of 4 (8 of 18 sequences of 9 tokens)");
}

}  // namespace
}  // namespace zt
