// The block runner's second stream ([Note: second stream] in nn/second_stream.h) under ZeRO stage 3
// in one process: the toy encoder-decoder (tests/nn/two_stream_toy.h) run with the engine's hooks
// (every block's values gathered before each use and released after, no prefetch), with and
// without activation checkpointing, reduces bitwise the gradients of the plain run without an
// engine, and gives bitwise its input gradients.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "nn/nn_test_util.h"
#include "nn/two_stream_toy.h"
#include "support/test_util.h"
#include "zerotrain/nn/block_runner.h"
#include "zerotrain/zero/zero_stage.h"

namespace zt {
namespace {

using test::TwoStreamToy;

void prepare(TwoStreamToy& toy) {
  test::allocate(toy.parameters(), DType::f32, DType::f32);
  test::randomize(toy.parameters(), 17, 0.6f);
  const Shape shape{TwoStreamToy::kRows, TwoStreamToy::kWidth};
  *toy.encoder_input = test::random_tensor(shape, DType::f32, 18);
  *toy.decoder_input = test::random_tensor(shape, DType::f32, 19);
}

TEST(ZeroSecondStream, Stage3ReducesThePlainRunsGradients) {
  TwoStreamToy plain(2, 3);
  prepare(plain);
  test::zero_grads(plain.parameters());
  nn::BlockRunner(plain.blocks).forward_backward({});
  std::vector<float> expected;  // every block's gradients, back to back in parameters() order
  for (auto& b : plain.blocks)
    for (nn::Parameter* p : b->parameters())
      for (float g : p->grad.to_floats())
        expected.push_back(g);

  for (bool checkpoint : {false, true}) {
    const std::string what = checkpoint ? "checkpointed" : "plain";
    TwoStreamToy toy(2, 3);
    prepare(toy);
    const zero::ZeroContext ctx = zero::ZeroContext::one_process(Device::cpu(), {});
    zero::ZeroOptions o;
    o.config.stage = 3;
    o.config.param_persistence_threshold = 0;
    o.config.prefetch_bucket_size = 0;
    auto engine = zero::make_zero_stage(o, toy.blocks, ctx);
    nn::BlockRunner runner(toy.blocks, {checkpoint});
    runner.set_hooks(engine->hooks());
    engine->zero_grad();
    engine->begin_micro_step(true);
    runner.forward_backward({});
    engine->finish_gradient_sync();
    for (nn::Parameter* p : toy.parameters())
      EXPECT_FALSE(p->value.defined()) << what << " " << p->name << " stays gathered";
    std::vector<float> reduced;
    for (const auto& g : engine->groups()) {
      int64_t n = 0;
      for (const nn::Parameter* p : g->params())
        n += numel_of(p->shape);
      const std::vector<float> shard = g->grad_shard().to_floats();
      reduced.insert(reduced.end(), shard.begin(), shard.begin() + n);
    }
    EXPECT_EQ(reduced, expected) << what;
    test::expect_bitwise_equal(*toy.encoder_input_grad, *plain.encoder_input_grad,
                               what + " encoder input");
    test::expect_bitwise_equal(*toy.decoder_input_grad, *plain.decoder_input_grad,
                               what + " decoder input");
  }
}

}  // namespace
}  // namespace zt
