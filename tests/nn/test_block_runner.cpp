// BlockRunner and activation checkpointing: checkpointed runs give bitwise the loss and gradients
// of plain runs for every family, and keep less memory alive at the peak (the CPU allocator's
// high-water mark, printed).
#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

#include "nn/nn_test_util.h"
#include "support/test_util.h"
#include "zerotrain/core/allocator.h"
#include "zerotrain/nn/block_runner.h"
#include "zerotrain/nn/transformer.h"

namespace zt {
namespace {

using nn::Family;

TEST(NnBlockRunner, CheckpointingIsBitwiseIdentical) {
  for (Family f : test::all_families()) {
    const nn::ModelConfig c = test::tiny_config(f);
    nn::Transformer m(c, {});
    test::randomize(m.parameters(), 5);
    const nn::StepContext ctx = test::make_step(c, 2, 7, 3);
    const double plain = test::model_loss_and_grads(m, ctx, false);
    std::vector<Tensor> g;
    for (auto* p : m.parameters())
      g.push_back(p->grad.clone());
    const double ckpt = test::model_loss_and_grads(m, ctx, true);
    EXPECT_EQ(plain, ckpt) << nn::family_name(f);
    auto params = m.parameters();
    for (size_t i = 0; i < params.size(); ++i)
      test::expect_bitwise_equal(g[i], params[i]->grad, nn::family_name(f) + " " + params[i]->name);
  }
}

TEST(NnBlockRunner, CheckpointingLowersPeakMemory) {
  for (Family f : {Family::llama, Family::gpt2}) {
    nn::ModelConfig c = test::tiny_config(f);
    c.num_layers = 6;
    c.max_position_embeddings = 64;
    nn::Transformer m(c, {});
    test::randomize(m.parameters(), 5);
    const nn::StepContext ctx = test::make_step(c, 4, 64, 3);
    size_t peak[2];
    for (int ck = 0; ck < 2; ++ck) {
      m.zero_grads();
      cpu_allocator().reset_peak();
      const size_t base = cpu_allocator().stats().allocated;
      nn::BlockRunner(m.blocks(), {ck == 1}).forward_backward(ctx);
      peak[ck] = cpu_allocator().stats().peak_allocated - base;
    }
    std::printf("[ peak    ] %s, 6 layers, B=4 S=64: activations peak %s plain, %s checkpointed\n",
                nn::family_name(f).c_str(), format_bytes(peak[0]).c_str(),
                format_bytes(peak[1]).c_str());
    EXPECT_LT(peak[1] * 2, peak[0]) << nn::family_name(f);
  }
}

// A recomputing forward returns nothing and skips the MLP's output projection (it allocates less
// than the plain forward), and the backward after it gives bitwise the plain backward's gradients.
TEST(NnBlockRunner, RecomputationRebuildsOnlyWhatBackwardReads) {
  for (Family f : test::all_families()) {
    const nn::ModelConfig c = test::tiny_config(f);
    nn::Transformer m(c, {});
    test::randomize(m.parameters(), 5);
    nn::StepContext ctx = test::make_step(c, 2, 16, 3);
    nn::Block& layer = *m.blocks()[1];
    const Tensor x = test::random_tensor({2, 16, c.hidden_size}, DType::f32, 11);
    const Tensor dy = test::random_tensor({2, 16, c.hidden_size}, DType::f32, 12);
    std::vector<Tensor> grads[2];
    Tensor dx[2];
    size_t forward_bytes[2];
    for (int again = 0; again < 2; ++again) {
      m.zero_grads();
      ctx.recomputing = again == 1;
      cpu_allocator().reset_peak();
      const size_t base = cpu_allocator().stats().allocated;
      const Tensor y = layer.forward(x, ctx);
      forward_bytes[again] = cpu_allocator().stats().peak_allocated - base;
      EXPECT_EQ(y.defined(), again == 0) << nn::family_name(f);
      ctx.recomputing = false;
      dx[again] = layer.backward(dy, ctx);
      for (auto* p : layer.parameters())
        grads[again].push_back(p->grad.clone());
    }
    EXPECT_LT(forward_bytes[1], forward_bytes[0]) << nn::family_name(f);
    test::expect_bitwise_equal(dx[0], dx[1], nn::family_name(f) + " dx");
    for (size_t i = 0; i < grads[0].size(); ++i)
      test::expect_bitwise_equal(grads[0][i], grads[1][i],
                                 nn::family_name(f) + " grad " + std::to_string(i));
  }
}

TEST(NnBlockRunner, BlocksKeepNothingAfterBackward) {
  const nn::ModelConfig c = test::tiny_config(Family::mistral);
  nn::Transformer m(c, {});
  test::randomize(m.parameters(), 5);
  const nn::StepContext ctx = test::make_step(c, 2, 16, 3);
  const size_t before = cpu_allocator().stats().allocated;
  nn::BlockRunner(m.blocks()).forward_backward(ctx);
  // Only the cached RoPE/position tables (a few hundred bytes per layer) stay.
  EXPECT_LT(cpu_allocator().stats().allocated, before + 4096);
}

}  // namespace
}  // namespace zt
