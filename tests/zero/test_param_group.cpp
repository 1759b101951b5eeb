// ParamGroup: the flat layout (offsets, shard sizes multiple of kNormChunk, pieces of each rank's
// shard covering every element once), the value states Sharded -> (Gathering ->) Gathered ->
// Released with illegal transitions throwing, and the gradient buffer's acquire / reduce / drop
// cycle. One rank (no communicator); the collectives with more ranks are covered by
// tests/mpi/test_zero_parity.cpp.
#include <gtest/gtest.h>

#include <vector>

#include "nn/nn_test_util.h"
#include "zerotrain/comm/self_communicator.h"
#include "zerotrain/core/error.h"
#include "zerotrain/zero/grad_norm.h"
#include "zerotrain/zero/param_group.h"

namespace zt {
namespace {

// The communicator of a one-process run.
comm::Communicator& one_rank() {
  static comm::SelfCommunicator self(60);
  return self;
}

using zero::ParamGroup;
using zero::ParamState;

TEST(ZeroParamGroup, LayoutAndShardPiecesCoverEveryElementOnce) {
  nn::Transformer model(test::tiny_config(nn::Family::llama), {});
  std::vector<nn::Parameter*> ps = model.blocks()[1]->parameters();
  int64_t numel = 0;
  for (nn::Parameter* p : ps)
    numel += numel_of(p->shape);
  for (int world : {1, 2, 3, 8}) {
    std::vector<int> covered(static_cast<size_t>(numel), 0);
    for (int rank = 0; rank < world; ++rank) {
      ParamGroup g(1, ps, world, rank);
      EXPECT_EQ(g.numel(), numel);
      EXPECT_EQ(g.shard_numel() % zero::kNormChunk, 0);
      EXPECT_GE(g.shard_numel() * world, numel);
      EXPECT_LT(g.shard_numel() - zero::kNormChunk, (numel + world - 1) / world);
      EXPECT_EQ(g.padded_numel(), g.shard_numel() * world);
      EXPECT_EQ(g.shard_offset(), g.shard_numel() * rank);
      int64_t expect_offset = 0;
      for (size_t i = 0; i < ps.size(); ++i) {
        EXPECT_EQ(g.offsets()[i], expect_offset);
        expect_offset += numel_of(ps[i]->shape);
      }
      for (const zero::ShardPiece& piece : g.shard_pieces()) {
        EXPECT_GE(piece.begin, g.shard_offset());
        EXPECT_LE(piece.end, g.shard_offset() + g.shard_numel());
        EXPECT_GE(piece.begin, piece.param_offset);
        EXPECT_LE(piece.end, piece.param_offset + numel_of(piece.param->shape));
        for (int64_t e = piece.begin; e < piece.end; ++e)
          ++covered[static_cast<size_t>(e)];
      }
    }
    for (int64_t e = 0; e < numel; ++e)
      ASSERT_EQ(covered[static_cast<size_t>(e)], 1) << "element " << e << " world " << world;
  }
}

TEST(ZeroParamGroup, ValueStatesAndIllegalTransitions) {
  nn::Transformer model(test::tiny_config(nn::Family::llama), {});
  model.init_random(3);
  std::vector<nn::Parameter*> ps = model.blocks()[1]->parameters();
  const std::vector<std::vector<float>> before = test::values_of(ps);
  ParamGroup g(1, ps, 1, 0);
  EXPECT_THROW(g.gather(one_rank(), {}), ValueError);  // not materialized: no shard to gather from
  g.materialize(false, {});
  EXPECT_EQ(g.state(), ParamState::sharded);
  for (nn::Parameter* p : ps)
    EXPECT_FALSE(p->value.defined()) << p->name;
  EXPECT_THROW(g.release(), ValueError);  // Sharded -> Released is illegal
  g.gather(one_rank(), {});
  EXPECT_EQ(g.state(), ParamState::gathered);
  EXPECT_EQ(test::values_of(ps), before);
  EXPECT_THROW(g.gather(one_rank(), {}), ValueError);  // already Gathered
  g.release();
  EXPECT_EQ(g.state(), ParamState::released);
  for (nn::Parameter* p : ps)
    EXPECT_FALSE(p->value.defined()) << p->name;
  EXPECT_THROW(g.release(), ValueError);                      // Released twice
  EXPECT_THROW(g.finish_gather(one_rank(), {}), ValueError);  // no begin_gather
  g.begin_gather({});
  EXPECT_EQ(g.state(), ParamState::gathering);
  EXPECT_THROW(g.release(), ValueError);  // a buffer still being gathered
  EXPECT_THROW(g.begin_gather({}), ValueError);
  g.finish_gather(one_rank(), {});
  EXPECT_EQ(g.state(), ParamState::gathered);
  EXPECT_EQ(test::values_of(ps), before);
}

TEST(ZeroParamGroup, ReplicatedGroupIsGatheredAndNeverReleased) {
  nn::Transformer model(test::tiny_config(nn::Family::gpt2), {});
  model.init_random(4);
  std::vector<nn::Parameter*> ps = model.blocks()[2]->parameters();
  const std::vector<std::vector<float>> before = test::values_of(ps);
  ParamGroup g(2, ps, 1, 0);
  g.materialize(true, {});
  EXPECT_EQ(g.state(), ParamState::gathered);
  EXPECT_TRUE(g.replicated());
  EXPECT_EQ(test::values_of(ps), before);
  // The shard is a view of the full buffer: writing a value shows in the shard.
  EXPECT_EQ(g.value_shard().storage(), ps.front()->value.storage());
  EXPECT_THROW(g.release(), ValueError);
  EXPECT_THROW(g.materialize(true, {}), Error);
}

TEST(ZeroParamGroup, GradientIsAcquiredReducedAndDropped) {
  nn::Transformer model(test::tiny_config(nn::Family::llama), {});
  std::vector<nn::Parameter*> ps = model.blocks()[1]->parameters();
  ParamGroup g(1, ps, 1, 0);
  g.materialize(true, {});
  // No gradient yet.
  EXPECT_THROW(g.reduce_grad(zero::ShardComms(one_rank()), false, {}), ValueError);
  g.acquire_grad(DType::f32, {});
  ASSERT_TRUE(g.has_full_grad());
  ps.back()->grad.fill(2.0);
  const Tensor first_view = ps.back()->grad;
  g.acquire_grad(DType::f32, {});  // a second acquire keeps the accumulated values
  EXPECT_EQ(ps.back()->grad.to_floats()[0], 2.0f);
  EXPECT_EQ(ps.back()->grad.storage(), first_view.storage());
  g.reduce_grad(zero::ShardComms(one_rank()), false, {});
  EXPECT_FALSE(g.has_full_grad());
  for (nn::Parameter* p : ps)
    EXPECT_FALSE(p->grad.defined()) << p->name;
  const std::vector<float> shard = g.grad_shard().to_floats();
  ASSERT_EQ(static_cast<int64_t>(shard.size()), g.shard_numel());
  const int64_t last = g.offsets().back();
  EXPECT_EQ(shard[static_cast<size_t>(last)], 2.0f);
  EXPECT_EQ(shard[static_cast<size_t>(last - 1)], 0.0f);
  EXPECT_EQ(shard.back(), 0.0f);  // padding stays zero
  // Acquired again: a fresh zeroed buffer.
  g.acquire_grad(DType::f32, {});
  EXPECT_EQ(ps.back()->grad.to_floats()[0], 0.0f);
  g.reduce_grad(zero::ShardComms(one_rank()), true, {});
  EXPECT_TRUE(g.has_full_grad());
  EXPECT_EQ(g.grad_shard().storage(), ps.back()->grad.storage());
}

}  // namespace
}  // namespace zt
