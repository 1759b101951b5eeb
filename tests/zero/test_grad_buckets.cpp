// GradBuckets: every owned parameter's gradient becomes a view into exactly one bucket, buckets are
// cut in backward order at block boundaries, each is announced ready after its lowest block, and
// gradients written through the parameters land in the flat buffers (and are zeroed by zero()).
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "nn/nn_test_util.h"
#include "zerotrain/core/error.h"
#include "zerotrain/zero/grad_buckets.h"

namespace zt {
namespace {

TEST(GradBuckets, CoverEveryParameterOnceInBackwardOrder) {
  for (nn::Family f : test::all_families()) {
    nn::Transformer model(test::tiny_config(f), {});
    auto& blocks = model.blocks();
    int64_t total = 0;
    for (auto& b : blocks)
      for (nn::Parameter* p : b->parameters())
        total += numel_of(p->shape);
    // A small bucket size: roughly one bucket per block.
    zero::GradBuckets buckets(blocks, 1000, Device::cpu());
    EXPECT_EQ(buckets.total_elements(), total);
    std::set<nn::Parameter*> seen;
    size_t previous_first = blocks.size();
    size_t announced = 0;
    for (size_t i = 0; i < buckets.buckets().size(); ++i) {
      const zero::GradBucket& b = buckets.buckets()[i];
      EXPECT_LE(b.first_block, b.last_block);
      EXPECT_LT(b.last_block, previous_first) << "buckets must follow backward order";
      previous_first = b.first_block;
      int64_t offset = 0;
      for (nn::Parameter* p : b.params) {
        EXPECT_TRUE(seen.insert(p).second) << p->name << " in two buckets";
        EXPECT_EQ(p->grad.storage(), b.flat.storage()) << p->name;
        EXPECT_EQ(p->grad.offset(), offset) << p->name;
        EXPECT_EQ(p->grad.shape(), p->shape);
        offset += numel_of(p->shape);
      }
      EXPECT_EQ(offset, b.flat.numel());
    }
    for (size_t blk = 0; blk < blocks.size(); ++blk) {
      for (size_t i : buckets.ready_after(blk))
        EXPECT_EQ(buckets.buckets()[i].first_block, blk);
      announced += buckets.ready_after(blk).size();
    }
    EXPECT_EQ(announced, buckets.buckets().size());
    EXPECT_EQ(seen.size(), model.parameters().size()) << nn::family_name(f);
  }
}

TEST(GradBuckets, OneHugeBucketHoldsTheWholeModel) {
  nn::Transformer model(test::tiny_config(nn::Family::llama), {});
  zero::GradBuckets buckets(model.blocks(), int64_t{1} << 40, Device::cpu());
  ASSERT_EQ(buckets.buckets().size(), 1u);
  EXPECT_EQ(buckets.buckets()[0].first_block, 0u);
  EXPECT_EQ(buckets.ready_after(0).size(), 1u);
}

TEST(GradBuckets, GradientsWrittenThroughParametersLandInTheBuffers) {
  nn::Transformer model(test::tiny_config(nn::Family::gpt2), {});
  model.init_random(7);
  zero::GradBuckets buckets(model.blocks(), 500, Device::cpu());
  const nn::StepContext ctx = test::make_step(model.config(), 2, 8, 3);
  const double loss = test::model_loss_and_grads(model, ctx);
  EXPECT_TRUE(std::isfinite(loss));
  double sum_params = 0, sum_flat = 0;
  for (nn::Parameter* p : model.parameters())
    for (float v : p->grad.to_floats())
      sum_params += std::abs(v);
  for (const auto& b : buckets.buckets())
    for (float v : b.flat.to_floats())
      sum_flat += std::abs(v);
  EXPECT_GT(sum_flat, 0.0);
  EXPECT_DOUBLE_EQ(sum_params, sum_flat);
  buckets.zero();
  for (const auto& b : buckets.buckets())
    for (float v : b.flat.to_floats())
      EXPECT_EQ(v, 0.0f);
}

// zero_optimization.reduce_bucket_size 0 (DeepSpeed accepts it): a bucket is cut once it holds
// >= 0 elements, so every block is its own bucket. Negative sizes are refused.
TEST(GradBuckets, ZeroBucketSizeCutsOneBucketPerBlock) {
  nn::Transformer model(test::tiny_config(nn::Family::llama), {});
  zero::GradBuckets buckets(model.blocks(), 0, Device::cpu());
  ASSERT_EQ(buckets.buckets().size(), model.blocks().size());
  for (size_t i = 0; i < buckets.buckets().size(); ++i)
    EXPECT_EQ(buckets.buckets()[i].first_block, buckets.buckets()[i].last_block);
  EXPECT_THROW(zero::GradBuckets(model.blocks(), -1, Device::cpu()), ValueError);
}

}  // namespace
}  // namespace zt
