// zero/optimizer_placement.h: which groups' optimizer runs are stepped on the host.
#include <gtest/gtest.h>

#include <vector>

#include "zerotrain/zero/optimizer_placement.h"

namespace zt {
namespace {

using zero::RunPlace;

zero::OptimizerOffload offload(zero::OffloadDevice device, double ratio) {
  zero::OptimizerOffload o;
  o.device = device;
  o.ratio = ratio;
  return o;
}

TEST(OptimizerPlacement, NoOffloadPutsEveryRunOnTheDevice) {
  const std::vector<int64_t> numels{4, 8, 2};
  const zero::OptimizerPlacement p =
      zero::place_optimizer_runs(numels, offload(zero::OffloadDevice::none, 1.0));
  EXPECT_EQ(p.place, std::vector<RunPlace>(3, RunPlace::device));
  EXPECT_EQ(p.index, (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(p.device_runs, 3u);
  EXPECT_EQ(p.host_runs, 0u);
}

TEST(OptimizerPlacement, FullOffloadPutsEveryRunOnTheHost) {
  const std::vector<int64_t> numels{4, 8, 2};
  for (const auto device : {zero::OffloadDevice::cpu, zero::OffloadDevice::nvme}) {
    const zero::OptimizerPlacement p = zero::place_optimizer_runs(numels, offload(device, 1.0));
    EXPECT_EQ(p.place, std::vector<RunPlace>(3, RunPlace::host));
    EXPECT_EQ(p.index, (std::vector<size_t>{0, 1, 2}));
    EXPECT_EQ(p.host_runs, 3u);
  }
}

// The first groups within `ratio` of the elements go to the host, whole groups only; the
// indices count each place in group order.
TEST(OptimizerPlacement, RatioTakesTheFirstWholeGroups) {
  const std::vector<int64_t> numels{30, 20, 40, 10};  // 100 elements
  const zero::OptimizerPlacement p =
      zero::place_optimizer_runs(numels, offload(zero::OffloadDevice::cpu, 0.5));
  EXPECT_EQ(p.place, (std::vector<RunPlace>{RunPlace::host, RunPlace::host, RunPlace::device,
                                            RunPlace::device}));
  EXPECT_EQ(p.index, (std::vector<size_t>{0, 1, 0, 1}));
  EXPECT_EQ(p.host_runs, 2u);
  EXPECT_EQ(p.device_runs, 2u);
}

// A later group that still fits the ratio goes to the host even after one that did not.
TEST(OptimizerPlacement, RatioSkipsAGroupTooLargeForTheRest) {
  const std::vector<int64_t> numels{60, 30, 10};
  const zero::OptimizerPlacement p =
      zero::place_optimizer_runs(numels, offload(zero::OffloadDevice::cpu, 0.2));
  EXPECT_EQ(p.place, (std::vector<RunPlace>{RunPlace::device, RunPlace::device, RunPlace::host}));
  EXPECT_EQ(p.index, (std::vector<size_t>{0, 1, 0}));
}

TEST(OptimizerPlacement, NoGroups) {
  const zero::OptimizerPlacement p =
      zero::place_optimizer_runs({}, offload(zero::OffloadDevice::cpu, 1.0));
  EXPECT_TRUE(p.place.empty());
  EXPECT_EQ(p.host_runs + p.device_runs, 0u);
}

}  // namespace
}  // namespace zt
