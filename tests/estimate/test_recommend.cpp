// The recommendation: the first setup in [Note: recommendation order] that fits, and none before
// it. Covers src/zerotrain/estimate/recommend.h.
#include <gtest/gtest.h>

#include "estimate/estimate_fixtures.h"
#include "zerotrain/core/error.h"
#include "zerotrain/estimate/recommend.h"
#include "zerotrain/estimate/units.h"

namespace zt::estimate {
namespace {

RunSetup base(const std::string& config, int64_t gpus, int64_t seq, int64_t mbs) {
  RunSetup s;
  s.model = estimate_config(config);
  s.gpus = gpus;
  s.seq = seq;
  s.micro_batch = mbs;
  return s;
}

// Every strategy before the recommended one, at the same micro-batch and checkpointing, must not
// fit; neither may anything at the same micro-batch without checkpointing when it checkpoints.
void expect_first_fit(const RunSetup& b, double gpu_memory, const Recommendation& r) {
  ASSERT_TRUE(r.found) << r.line;
  EXPECT_LE(r.estimate.needed, gpu_memory);
  const RunSetup& got = r.estimate.setup;
  for (bool ac : {false, true}) {
    if (ac && !got.activation_checkpointing) break;
    for (const Strategy& s : strategies_in_order()) {
      const bool same = s.stage == got.stage && s.offload_optimizer == got.offload_optimizer &&
                        s.offload_param == got.offload_param;
      if (same && ac == got.activation_checkpointing) return;
      RunSetup t = b;
      t.stage = s.stage;
      t.offload_optimizer = s.offload_optimizer;
      t.offload_param = s.offload_param;
      t.micro_batch = got.micro_batch;
      t.activation_checkpointing = ac;
      EXPECT_GT(estimate_peak(t).needed, gpu_memory) << describe(t) << " fits but was skipped";
    }
  }
}

TEST(Recommend, StageZeroWhenItFits) {
  const RunSetup b = base("llama_1b_untied.json", 1, 4096, 2);
  const Recommendation r = recommend(b, 80 * kGiB);
  expect_first_fit(b, 80 * kGiB, r);
  EXPECT_EQ(r.estimate.setup.stage, 0);
  EXPECT_EQ(r.estimate.setup.micro_batch, 2);
  EXPECT_FALSE(r.estimate.setup.activation_checkpointing);
  EXPECT_EQ(r.line.rfind("recommended: stage 0, micro-batch 2", 0), 0u) << r.line;
}

TEST(Recommend, OffloadOnASmallGpu) {
  const RunSetup b = base("llama_1b_untied.json", 1, 4096, 2);
  const Recommendation r = recommend(b, 24 * kGiB);
  expect_first_fit(b, 24 * kGiB, r);
  EXPECT_EQ(r.estimate.setup.stage, 3);
  EXPECT_TRUE(r.estimate.setup.offload_optimizer);
}

TEST(Recommend, ShardsTheEightBOnFourGpus) {
  const RunSetup b = base("llama3_8b.json", 4, 4096, 1);
  const Recommendation r = recommend(b, 80 * kGiB);
  expect_first_fit(b, 80 * kGiB, r);
  EXPECT_GE(r.estimate.setup.stage, 1);
}

TEST(Recommend, SaysWhenNothingFits) {
  const RunSetup b = base("llama3_8b.json", 1, 4096, 1);
  const Recommendation r = recommend(b, 1 * kGiB);
  EXPECT_FALSE(r.found);
  EXPECT_EQ(r.line.rfind("nothing fits in 1.00 GiB", 0), 0u) << r.line;
  EXPECT_THROW(recommend(b, 0), ValueError);
}

}  // namespace
}  // namespace zt::estimate
