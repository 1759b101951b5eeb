// [Note: loss normalisation] (nn/head_block.h) under mpirun (2 and 4 ranks): a tiny llama under
// ZeRO stage 0, 2 accumulation steps per rank, targets masked in different proportions in every
// micro-batch and one micro-batch of rank 0 masked entirely. The trainer's count
// (train::global_loss_targets) is the global number of unmasked targets; the step's loss (each
// micro-batch's share, summed over micro-batches and ranks) and its reduced gradients equal a
// direct computation: one process running every rank's micro-batches as one batch, whose head
// takes the plain mean over that batch's unmasked targets. The mean of per-micro-batch means (the
// rule before transformers 4.46) is far from it, so the comparison can fail.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "mpi/mpi_test_env.h"
#include "mpi/training_inputs.h"
#include "zerotrain/nn/block_runner.h"
#include "zerotrain/nn/loss_targets.h"
#include "zerotrain/nn/transformer.h"
#include "zerotrain/train/step_batches.h"
#include "zerotrain/zero/zero_stage.h"

namespace zt {
namespace {

constexpr int64_t kRows = 2, kSeq = 8, kMicroSteps = 2;
constexpr uint64_t kSeed = 5;

// Micro-batch m of rank r, the same on every rank that builds it. Its targets are masked with a
// proportion that depends on (r, m); rank 0's second micro-batch has none left.
data::Batch micro_batch(int r, int64_t m, int64_t vocab) {
  std::vector<int64_t> inputs(kRows * kSeq), targets(kRows * kSeq);
  const int64_t masked_every = 2 + (r * kMicroSteps + m) % 3;  // every 2nd, 3rd or 4th kept
  for (int64_t i = 0; i < kRows * kSeq; ++i) {
    const int64_t k = i + 97 * (r * kMicroSteps + m);
    inputs[i] = (k * 7 + 3) % vocab;
    targets[i] = (k * 13 + 5) % vocab;
    if (i % masked_every != 0) targets[i] = nn::kIgnoreIndex;
  }
  if (r == 0 && m == 1) targets.assign(targets.size(), nn::kIgnoreIndex);
  data::Batch b;
  b.inputs = Tensor::from_ints(inputs, {kRows, kSeq}, DType::i32);
  b.targets = Tensor::from_ints(targets, {kRows, kSeq}, DType::i32);
  b.rows = kRows;
  return b;
}

// The inputs or targets of every micro-batch in `batches`, stacked into one batch.
Tensor stack(const std::vector<data::Batch>& batches, bool targets) {
  std::vector<int64_t> all;
  for (const data::Batch& b : batches)
    for (int64_t v : (targets ? b.targets : b.inputs).to_ints())
      all.push_back(v);
  return Tensor::from_ints(all, {static_cast<int64_t>(batches.size()) * kRows, kSeq}, DType::i32);
}

std::vector<float> flat_grads(nn::Transformer& model) {
  std::vector<float> out;
  for (nn::Parameter* p : model.parameters())
    for (float g : p->grad.to_floats())
      out.push_back(g);
  return out;
}

TEST(LossNormalisation, GlobalCountOverAccumulationAndRanks) {
  comm::Communicator& comm = test::process_group().host();
  const int world = comm.size(), rank = comm.rank();
  const nn::ModelConfig mc = test::tiny_llama();

  // The step as the trainer runs it: stage 0 over the ranks, 2 micro-steps.
  nn::Transformer model(mc, {.allocate_grads = false});
  model.init_random(kSeed);
  zero::ZeroOptions zo;
  zo.config.stage = 0;
  const auto engine =
      zero::make_zero_stage(zo, model.blocks(), zero::ZeroContext(comm, Device::cpu(), {}));
  nn::BlockRunner runner(model.blocks());
  runner.set_hooks(engine->hooks());
  std::vector<data::Batch> mine;
  for (int64_t m = 0; m < kMicroSteps; ++m)
    mine.push_back(micro_batch(rank, m, mc.vocab_size));
  engine->zero_grad();
  nn::StepContext ctx;
  ctx.num_items_in_batch = train::global_loss_targets(mine, *engine);
  double loss = 0;
  for (int64_t m = 0; m < kMicroSteps; ++m) {
    engine->begin_micro_step(m + 1 == kMicroSteps);
    ctx.tokens = mine[m].inputs;
    ctx.targets = mine[m].targets;
    loss += runner.forward_backward(ctx).to_floats()[0];
  }
  engine->finish_gradient_sync();
  loss = engine->sum_over_ranks(loss);

  // The direct computation: every rank's micro-batches as one batch in one process.
  std::vector<data::Batch> all;
  int64_t count = 0;
  double mean_of_means = 0;
  for (int r = 0; r < world; ++r)
    for (int64_t m = 0; m < kMicroSteps; ++m) {
      all.push_back(micro_batch(r, m, mc.vocab_size));
      count += nn::count_loss_targets(all.back().targets);
    }
  EXPECT_EQ(ctx.num_items_in_batch, count);
  nn::Transformer reference(mc, {});
  reference.init_random(kSeed);
  nn::BlockRunner reference_runner(reference.blocks());
  nn::StepContext whole;
  whole.tokens = stack(all, false);
  whole.targets = stack(all, true);
  reference.zero_grads({});
  const double direct = reference_runner.forward_backward(whole).to_floats()[0];
  const std::vector<float> direct_grads = flat_grads(reference);
  for (const data::Batch& b : all) {  // the old rule, each micro-batch's own mean (adds to grads)
    nn::StepContext one;
    one.tokens = b.inputs;
    one.targets = b.targets;
    const double own = reference_runner.forward_backward(one).to_floats()[0];
    mean_of_means += own / static_cast<double>(all.size());
  }

  EXPECT_NEAR(loss, direct, 1e-5 * direct);
  EXPECT_GT(std::abs(mean_of_means - direct), 1e-2 * direct)
      << "the masks do not tell the rules apart";
  const std::vector<float> grads = flat_grads(model);
  ASSERT_EQ(grads.size(), direct_grads.size());
  double max_abs = 0;
  for (float g : direct_grads)
    max_abs = std::max(max_abs, static_cast<double>(std::abs(g)));
  for (size_t i = 0; i < grads.size(); ++i)
    ASSERT_NEAR(grads[i], direct_grads[i], 1e-5 * max_abs) << "gradient element " << i;
}

}  // namespace
}  // namespace zt
