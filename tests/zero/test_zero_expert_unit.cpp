// [Note: experts as one unit] (nn/expert_block.h) under ZeRO stage 3 in one process: each block
// of experts becomes one parameter group holding the router's, its other and every expert's
// parameters; its forward hook gathers all of them at once (and nothing of the other block, with
// no prefetch), and the hook after its forward releases all of them.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "nn/expert_toy.h"
#include "nn/nn_test_util.h"
#include "zerotrain/zero/zero_stage.h"

namespace zt {
namespace {

TEST(ZeroExpertUnit, Stage3GathersAndReleasesEveryExpertTogether) {
  std::vector<std::unique_ptr<nn::Block>> blocks;
  for (int b = 0; b < 2; ++b) {
    blocks.push_back(test::make_expert_toy("model.layers." + std::to_string(b), 3, 4));
    test::allocate(blocks.back()->parameters(), DType::f32, DType::f32);
    test::randomize(blocks.back()->parameters(), 7 + b);
  }
  const zero::ZeroContext ctx = zero::ZeroContext::one_process(Device::cpu(), {});
  zero::ZeroOptions o;
  o.config.stage = 3;
  o.config.param_persistence_threshold = 0;
  o.config.prefetch_bucket_size = 0;
  auto engine = zero::make_zero_stage(o, blocks, ctx);
  ASSERT_EQ(engine->groups().size(), blocks.size());
  for (size_t b = 0; b < blocks.size(); ++b)
    EXPECT_EQ(engine->groups()[b]->params(), blocks[b]->parameters()) << "block " << b;

  auto gathered = [&](size_t b) {
    int n = 0;
    for (nn::Parameter* p : blocks[b]->parameters())
      n += p->value.defined() && p->value.shape() == p->shape;
    return n;
  };
  const int per_block = static_cast<int>(blocks[0]->parameters().size());
  ASSERT_EQ(per_block, 2 + 3);
  const nn::BlockHooks hooks = engine->hooks();
  engine->begin_forward_only();
  for (size_t b = 0; b < blocks.size(); ++b) {
    EXPECT_EQ(gathered(b), 0) << "block " << b << " before its forward";
    hooks.before_forward(b);
    EXPECT_EQ(gathered(b), per_block) << "block " << b << " in its forward";
    EXPECT_EQ(gathered(1 - b), 0) << "the other block during block " << b << "'s forward";
    hooks.after_forward(b);
    EXPECT_EQ(gathered(b), 0) << "block " << b << " after its forward";
  }
  engine->end_forward_only();
}

}  // namespace
}  // namespace zt
