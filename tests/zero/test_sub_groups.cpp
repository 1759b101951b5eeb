// zero/sub_groups.h (host groups packed into sub-groups) and zero/nvme_value_staging.h (where a
// sub-group's swapped values lie in the one staging buffer).
#include <gtest/gtest.h>

#include <vector>

#include "zerotrain/core/error.h"
#include "zerotrain/zero/nvme_value_staging.h"
#include "zerotrain/zero/sub_groups.h"

namespace zt {
namespace {

std::vector<std::pair<size_t, size_t>> ranges(const std::vector<zero::SubGroup>& s) {
  std::vector<std::pair<size_t, size_t>> out;
  for (const zero::SubGroup& g : s)
    out.emplace_back(g.first, g.last);
  return out;
}

TEST(SubGroups, PacksWholeGroupsAndTheLastIsShort) {
  const std::vector<int64_t> numels{4, 4, 4, 4, 4};
  EXPECT_EQ(ranges(zero::split_sub_groups(numels, 8)),
            (std::vector<std::pair<size_t, size_t>>{{0, 2}, {2, 4}, {4, 5}}));
}

// A group larger than sub_group_size is a sub-group of its own, never split.
TEST(SubGroups, AGroupLargerThanTheSizeStandsAlone) {
  const std::vector<int64_t> numels{3, 100, 3, 3};
  EXPECT_EQ(ranges(zero::split_sub_groups(numels, 8)),
            (std::vector<std::pair<size_t, size_t>>{{0, 1}, {1, 2}, {2, 4}}));
}

TEST(SubGroups, EverySizeAboveTheTotalIsOneSubGroup) {
  const std::vector<int64_t> numels{5, 6, 7};
  EXPECT_EQ(ranges(zero::split_sub_groups(numels, 1'000'000'000)),
            (std::vector<std::pair<size_t, size_t>>{{0, 3}}));
  EXPECT_TRUE(zero::split_sub_groups({}, 8).empty());
}

TEST(SubGroups, SubGroupOfAHostGroup) {
  const std::vector<zero::SubGroup> s{{0, 2}, {2, 3}, {3, 6}};
  EXPECT_EQ(zero::sub_group_of(s, 0), 0u);
  EXPECT_EQ(zero::sub_group_of(s, 1), 0u);
  EXPECT_EQ(zero::sub_group_of(s, 2), 1u);
  EXPECT_EQ(zero::sub_group_of(s, 5), 2u);
  EXPECT_THROW(zero::sub_group_of(s, 6), Error);
}

// Each sub-group's runs start at byte 0, 64-aligned; the buffer holds the largest sub-group.
TEST(NvmeValueStaging, RunsAlignedFromTheFrontPerSubGroup) {
  const std::vector<int64_t> bytes{10, 64, 65, 200};
  const std::vector<zero::SubGroup> s{{0, 3}, {3, 4}};
  const zero::ValueStaging v = zero::stage_values(bytes, s);
  EXPECT_EQ(v.offset, (std::vector<int64_t>{0, 64, 128, 0}));
  EXPECT_EQ(v.bytes, 256);  // 64 + 64 + 128 for the first; 256 for the second
}

}  // namespace
}  // namespace zt
