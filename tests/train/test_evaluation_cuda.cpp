// Evaluation on a GPU ([Note: evaluation] in src/zerotrain/train/evaluation.h): --eval-only of a
// tiny llama in bf16 on cuda:0 equals the CPU's loss within bf16 rounding, and a stage-3 run with
// evaluations (parameters gathered on the gather stream with overlap_comm) gives bitwise the losses
// and weights of the run without. Skipped without a GPU.
#include <gtest/gtest.h>

#include <filesystem>
#include <vector>

#include "io/io_test_util.h"
#include "nn/nn_test_util.h"
#include "support/test_util.h"
#include "support/token_fixture.h"
#include "zerotrain/io/hf_config.h"
#include "zerotrain/train/trainer.h"

namespace zt {
namespace {

namespace fs = std::filesystem;

train::TrainConfig gpu_eval_config(const fs::path& dir) {
  const nn::ModelConfig mc = test::tiny_cuda_config(nn::Family::llama);
  io::write_hf_config(mc, dir / "config.json");
  test::write_random_tokens(dir / "tokens.bin", mc.vocab_size, 600, 88172645463325252ull);
  test::write_random_tokens(dir / "eval.bin", mc.vocab_size, 150, 0x2545F4914F6CDD1Dull);
  train::TrainConfig c;
  c.paths.model = dir / "config.json";
  c.paths.data = dir / "tokens.bin";
  c.eval.data = dir / "eval.bin";
  c.steps = 4;
  c.data.micro_batch = 2;
  c.data.seq_len = 8;
  c.schedule.lr = 1e-2;
  c.data.seed = 7;
  c.reporting.log_every = 1;
  c.device = Device::cuda(0);
  c.precision.dtype = DType::bf16;
  return c;
}

TEST(EvaluationCuda, EvalOnlyMatchesTheCpu) {
  ZT_SKIP_WITHOUT_CUDA();
  test::TempDir dir;
  train::TrainConfig c = gpu_eval_config(dir.path());
  c.eval.only = true;
  const train::TrainSummary gpu = train::train(c);
  c.device = Device::cpu();
  const train::TrainSummary cpu = train::train(c);
  ASSERT_EQ(gpu.evals.size(), 1u);
  EXPECT_EQ(gpu.evals[0].tokens, cpu.evals[0].tokens);
  EXPECT_NEAR(gpu.evals[0].loss, cpu.evals[0].loss, 2e-2 * cpu.evals[0].loss);
}

TEST(EvaluationCuda, Stage3TrainingWithEvaluationsIsBitwiseTheRunWithout) {
  ZT_SKIP_WITHOUT_CUDA();
  test::TempDir dir;
  train::TrainConfig c = gpu_eval_config(dir.path());
  c.zero.stage = 3;
  c.zero.overlap_comm = true;
  c.eval.every = 2;
  std::vector<double> with, without;
  train::TrainCallbacks cb;
  cb.on_step = [&with](int64_t, int64_t, double loss) { with.push_back(loss); };
  c.paths.out = dir / "with";
  const train::TrainSummary s = train::train(c, cb);
  train::TrainConfig plain = c;
  plain.eval = {};
  plain.paths.out = dir / "without";
  train::TrainCallbacks pcb;
  pcb.on_step = [&without](int64_t, int64_t, double loss) { without.push_back(loss); };
  train::train(plain, pcb);
  EXPECT_EQ(s.evals.size(), 2u);
  EXPECT_EQ(with, without);
  EXPECT_EQ(test::read_bytes(dir / "with" / "model" / "model.safetensors"),
            test::read_bytes(dir / "without" / "model" / "model.safetensors"));
}

}  // namespace
}  // namespace zt
