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
void expect_first_fit(const RunSetup& b, double gpu_memory, const Recommendation& r,
                      double host_memory = 0) {
  ASSERT_TRUE(r.found) << r.line;
  EXPECT_LE(r.estimate.needed, gpu_memory);
  const RunSetup& got = r.estimate.setup;
  for (bool ac : {false, true}) {
    if (ac && !got.activation_checkpointing) break;
    for (const Strategy& s : strategies_in_order()) {
      const bool same = s == Strategy{got.stage, got.offload_optimizer, got.offload_param};
      if (same && ac == got.activation_checkpointing) return;
      RunSetup t = b;
      t.stage = s.stage;
      t.offload_optimizer = s.offload_optimizer;
      t.offload_param = s.offload_param;
      t.micro_batch = got.micro_batch;
      t.activation_checkpointing = ac;
      const PeakEstimate e = estimate_peak(t);
      EXPECT_TRUE(e.needed > gpu_memory || (host_memory > 0 && e.host_per_node > host_memory))
          << describe(t) << " fits but was skipped";
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

// On one GPU stage 2 with optimizer offload comes before stage 3's (it was stage 3 + offload when
// the order had no stage-2 offload).
TEST(Recommend, OffloadOnASmallGpu) {
  const RunSetup b = base("llama_1b_untied.json", 1, 4096, 2);
  const Recommendation r = recommend(b, 24 * kGiB);
  expect_first_fit(b, 24 * kGiB, r);
  EXPECT_EQ(r.estimate.setup.stage, 2);
  EXPECT_EQ(r.estimate.setup.offload_optimizer, OffloadDevice::cpu);
  EXPECT_NE(r.line.find("; host "), std::string::npos) << r.line;
}

// The seed's case: GPT-2 XL at micro-batch 16 on a 24 GiB GPU needs offload; a host too small for
// the state held there pushes the recommendation on to NVMe, and a host smaller than even the
// staging buffers and copies leaves nothing.
TEST(Recommend, HostMemoryRefusesSetupsWhoseHostPeakDoesNotFit) {
  RunSetup b = base("gpt2_xl.json", 1, 1024, 16);
  b.offload_buffers.sub_group_size = 1e8;  // staging buffers of 1e8 elements with nvme
  const Recommendation free_host = recommend(b, 24 * kGiB);
  expect_first_fit(b, 24 * kGiB, free_host);
  ASSERT_NE(free_host.estimate.setup.offload_optimizer, OffloadDevice::none) << free_host.line;
  const double held = free_host.estimate.host_per_node;
  const Recommendation small_host = recommend(b, 24 * kGiB, strategies_in_order(), 0.5 * held);
  expect_first_fit(b, 24 * kGiB, small_host, 0.5 * held);
  EXPECT_EQ(small_host.estimate.setup.offload_optimizer, OffloadDevice::nvme) << small_host.line;
  EXPECT_LE(small_host.estimate.host_per_node, 0.5 * held);
  EXPECT_GT(small_host.estimate.disk_per_node, 0);
  const Recommendation none = recommend(b, 24 * kGiB, strategies_in_order(), 1024.0);
  EXPECT_FALSE(none.found);
  EXPECT_NE(none.line.find("of host memory per node"), std::string::npos) << none.line;
  EXPECT_THROW(recommend(b, 24 * kGiB, strategies_in_order(), -1.0), ValueError);
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
