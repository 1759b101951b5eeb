// The estimate of a run on the CPU (RunSetup::host_run): no cuBLASLt workspace and no margin, no
// offload, and a recommendation that searches only what a host run can do. Covers the host_run
// paths of src/zerotrain/estimate/peak_estimate.h and recommend.h.
#include <gtest/gtest.h>

#include <algorithm>

#include "estimate/estimate_fixtures.h"
#include "zerotrain/core/error.h"
#include "zerotrain/estimate/recommend.h"
#include "zerotrain/estimate/units.h"

namespace zt::estimate {
namespace {

RunSetup setup(bool host) {
  RunSetup s;
  s.model = estimate_config("llama_1b_untied.json");
  s.seq = 1024;
  s.micro_batch = 4;
  s.dtype = DType::f32;
  s.host_run = host;
  return s;
}

TEST(HostRun, NoWorkspaceAndNoMargin) {
  const PeakEstimate gpu = estimate_peak(setup(false));
  const PeakEstimate host = estimate_peak(setup(true));
  EXPECT_EQ(host.margin, 0.0);
  EXPECT_EQ(host.needed, host.peak_allocated);
  EXPECT_DOUBLE_EQ(gpu.peak_allocated - host.peak_allocated, kCublasWorkspaceBytes);
  for (const MemoryItem& it : host.items)
    EXPECT_EQ(it.name.find("cuBLASLt"), std::string::npos);
}

TEST(HostRun, OffloadIsAnError) {
  RunSetup s = setup(true);
  s.stage = 3;
  s.offload_optimizer = OffloadDevice::cpu;
  EXPECT_THROW(estimate_peak(s), ValueError);
}

TEST(HostRun, RecommendationSkipsOffload) {
  RunSetup s = setup(true);
  s.gpus = 4;
  s.gpus_per_node = 4;
  // Between what stage 3 without offload needs at its most frugal micro-batch (the same rows per
  // step: below the base micro-batch, accumulation keeps full gradients) with checkpointing and
  // more.
  double least = 0;
  for (int64_t m = s.micro_batch; m >= 1; m /= 2) {
    RunSetup frugal = s;
    frugal.stage = 3;
    frugal.micro_batch = m;
    frugal.grad_accum = s.micro_batch / m;
    frugal.activation_checkpointing = true;
    const double needed = estimate_peak(frugal).needed;
    least = least == 0 ? needed : std::min(least, needed);
  }
  const Recommendation none = recommend(s, 0.9 * least);
  EXPECT_FALSE(none.found);
  EXPECT_EQ(none.estimate.setup.offload_optimizer, OffloadDevice::none);
  EXPECT_EQ(none.estimate.setup.stage, 3);
  EXPECT_NE(none.line.find("GiB per rank"), std::string::npos) << none.line;
  const Recommendation some = recommend(s, least);
  ASSERT_TRUE(some.found) << some.line;
  EXPECT_EQ(some.estimate.setup.offload_optimizer, OffloadDevice::none);
  EXPECT_LE(some.estimate.needed, least);
}

TEST(HostRun, AnEmptySearchIsAnError) {
  EXPECT_THROW(recommend(setup(true), 80 * kGiB, {{3, OffloadDevice::cpu, OffloadDevice::none}}),
               ValueError);
}

}  // namespace
}  // namespace zt::estimate
