// The check behind the sharded-checkpoint seam's tests (tests/zero/test_zero_shard_checkpoint.cpp
// in one process, tests/mpi/test_zero_shard_checkpoint.cpp under mpirun): an engine takes a step,
// writes its shard (ZeroStage::save_shard) into a MemoryShardStore and takes a second step; a fresh
// engine over a model with other values reads the shard back (load_shard) and takes the same
// second step. Both must end with bitwise the same values and optimizer state.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "zerotrain/nn/block_runner.h"
#include "zerotrain/nn/transformer.h"
#include "zerotrain/zero/shard_checkpoint.h"
#include "zerotrain/zero/zero_stage.h"

namespace zt::test {

// A batch of 2 x 8 tokens and targets from `seed` (every fifth target ignored).
inline nn::StepContext shard_test_batch(const nn::ModelConfig& mc, uint64_t seed) {
  nn::StepContext ctx;
  ctx.compute_dtype = DType::bf16;
  std::vector<int64_t> tokens(16), targets(16);
  for (size_t i = 0; i < tokens.size(); ++i) {
    tokens[i] = static_cast<int64_t>((i * 7 + seed * 13) % static_cast<uint64_t>(mc.vocab_size));
    targets[i] = i % 5 == 0 ? -100 : static_cast<int64_t>((i * 11 + seed) % mc.vocab_size);
  }
  ctx.tokens = Tensor::from_ints(tokens, {2, 8}, DType::i32);
  ctx.targets = Tensor::from_ints(targets, {2, 8}, DType::i64);
  return ctx;
}

inline void step_engine(zero::ZeroStage& engine, nn::Transformer& model, uint64_t seed) {
  nn::BlockRunner runner(model.blocks());
  runner.set_hooks(engine.hooks());
  engine.zero_grad();
  engine.begin_micro_step(true);
  runner.forward_backward(shard_test_batch(model.config(), seed));
  engine.finish_gradient_sync();
  (void)engine.grad_norm();
  engine.step(1e-2f, 0.5f);
}

// Every value, gathered, as bytes.
inline std::vector<std::string> value_bytes(zero::ZeroStage& engine, nn::Transformer& model) {
  engine.begin_full_parameters();
  std::vector<std::string> out;
  for (const nn::Parameter* p : model.parameters()) {
    const Tensor host = p->value.to(Device::cpu());
    out.emplace_back(static_cast<const char*>(host.data()), host.nbytes());
  }
  engine.end_full_parameters();
  return out;
}

// `rank_seed` varies the batches per rank (as data parallelism does).
inline void expect_shard_round_trip(const nn::ModelConfig& mc, int stage,
                                    const zero::ZeroContext& ctx, uint64_t rank_seed) {
  SCOPED_TRACE("stage " + std::to_string(stage));
  zero::ZeroOptions o;
  o.config.stage = stage;
  o.config.param_persistence_threshold =
      2000;  // stage 3: small groups stay gathered, the others are released
  nn::Transformer a(mc, {.param_dtype = DType::bf16});
  a.init_random(2);
  auto engine_a = zero::make_zero_stage(o, a.blocks(), ctx);
  step_engine(*engine_a, a, 10 + rank_seed);
  zero::MemoryShardStore store;
  engine_a->save_shard(store);
  step_engine(*engine_a, a, 20 + rank_seed);

  nn::Transformer b(mc, {.param_dtype = DType::bf16});
  b.init_random(9);  // other values: only the shard can make them right
  auto engine_b = zero::make_zero_stage(o, b.blocks(), ctx);
  const std::vector<std::string> before = value_bytes(*engine_b, b);
  engine_b->load_shard(store);
  EXPECT_EQ(engine_b->step_count(), 1);
  step_engine(*engine_b, b, 20 + rank_seed);
  const std::vector<std::string> want = value_bytes(*engine_a, a);
  EXPECT_NE(before, want);
  EXPECT_TRUE(value_bytes(*engine_b, b) == want) << "values differ after the resumed step";
  const optim::OptimizerState sa = engine_a->full_optimizer_state();
  const optim::OptimizerState sb = engine_b->full_optimizer_state();
  EXPECT_EQ(sb.step, 2);
  ASSERT_EQ(sa.tensors.size(), sb.tensors.size());
  for (const auto& [name, t] : sa.tensors) {
    const Tensor ha = t.to(Device::cpu()), hb = sb.tensors.at(name).to(Device::cpu());
    EXPECT_TRUE(std::string(static_cast<const char*>(ha.data()), ha.nbytes()) ==
                std::string(static_cast<const char*>(hb.data()), hb.nbytes()))
        << name;
  }
}

}  // namespace zt::test
