// Evaluation sharded over the ranks under mpirun (2 and 4 ranks), see [Note: evaluation] in
// src/zerotrain/train/evaluation.h: the eval loss of ZeRO stage 3 (zero.Init, parameters gathered
// for each block's forward) over the ranks is bitwise one process's on the same weights, with a
// batch count that does not divide over the ranks (ranks without a batch run a forward that counts
// nothing); a stage-3 training run evaluating every 2 steps gives bitwise the evaluations of the
// same run at stage 0 and the losses and weights of the stage-3 run without evaluations.
#include <gtest/gtest.h>

#include <filesystem>
#include <vector>

#include "mpi/mpi_test_env.h"
#include "mpi/training_inputs.h"
#include "zerotrain/train/trainer.h"

namespace zt {
namespace {

namespace fs = std::filesystem;

// config.json, tokens.bin and eval.bin (250 tokens: 31 sequences of 8 + 1, 11 micro-batches of 3
// with a last one of 1: not a multiple of 2 or 4 ranks) in a directory every rank sees.
train::TrainConfig eval_config(const fs::path& dir) {
  test::write_inputs(dir, test::tiny_llama());
  if (test::process_group().rank() == 0)
    test::write_random_tokens(dir / "eval.bin", test::tiny_llama().vocab_size, 250, 0xC0FFEEull);
  test::process_group().host().barrier();
  train::TrainConfig c;
  c.paths.model = dir / "config.json";
  c.paths.data = dir / "tokens.bin";
  c.eval.data = dir / "eval.bin";
  c.steps = 4;
  c.data.seq_len = 8;
  c.data.micro_batch = 3;
  c.schedule.lr = 1e-2;
  c.reporting.log_every = 1;
  c.data.seed = 11;
  return c;
}

TEST(EvaluationMpi, Stage3EvalLossIsBitwiseOneProcesss) {
  comm::Communicator& comm = test::process_group().host();
  const fs::path dir = test::shared_temp_dir("eval_stage3");
  train::TrainConfig c = eval_config(dir);
  c.eval.only = true;
  c.zero.stage = 3;
  c.comm = &comm;
  const train::TrainSummary ranks = train::train(c);
  train::TrainConfig one = c;
  one.comm = nullptr;
  one.zero.stage = 0;
  const train::TrainSummary alone = train::train(one);
  ASSERT_EQ(ranks.evals.size(), 1u);
  ASSERT_EQ(alone.evals.size(), 1u);
  EXPECT_EQ(ranks.evals[0].loss, alone.evals[0].loss);
  EXPECT_EQ(ranks.evals[0].tokens, 31 * 8);
  EXPECT_EQ(ranks.evals[0].tokens, alone.evals[0].tokens);
  EXPECT_EQ(ranks.evals[0].sequences, 31);
  comm.barrier();
  if (comm.rank() == 0) fs::remove_all(dir);
}

TEST(EvaluationMpi, Stage3TrainingWithEvaluationsMatchesStage0AndTheRunWithout) {
  comm::Communicator& comm = test::process_group().host();
  const fs::path dir = test::shared_temp_dir("eval_training");
  train::TrainConfig c = eval_config(dir);
  c.eval.every = 2;
  c.comm = &comm;
  std::vector<std::vector<double>> losses(3);
  auto record = [&losses](size_t run) {
    train::TrainCallbacks cb;
    cb.on_step = [&losses, run](int64_t, int64_t, double loss) { losses[run].push_back(loss); };
    return cb;
  };
  c.zero.stage = 3;
  c.paths.out = dir / "stage3";
  const train::TrainSummary s3 = train::train(c, record(0));
  train::TrainConfig zero = c;
  zero.zero.stage = 0;
  zero.paths.out = dir / "stage0";
  const train::TrainSummary s0 = train::train(zero, record(1));
  train::TrainConfig plain = c;
  plain.eval = {};
  plain.paths.out = dir / "plain";
  train::train(plain, record(2));

  ASSERT_EQ(s3.evals.size(), 2u);
  ASSERT_EQ(s0.evals.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(s3.evals[i].step, static_cast<int64_t>(2 * (i + 1)));
    EXPECT_EQ(s3.evals[i].loss, s0.evals[i].loss) << "after step " << s3.evals[i].step;
  }
  EXPECT_EQ(losses[0], losses[1]);
  EXPECT_EQ(losses[0], losses[2]);
  comm.barrier();
  if (comm.rank() == 0) {
    EXPECT_EQ(test::file_bytes(dir / "stage3" / "model" / "model.safetensors"),
              test::file_bytes(dir / "plain" / "model" / "model.safetensors"));
    fs::remove_all(dir);
  }
  comm.barrier();
}

}  // namespace
}  // namespace zt
