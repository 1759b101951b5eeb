// Edit distance and the "did you mean" hint (zerotrain/config/nearest_name.h).
#include <gtest/gtest.h>

#include "zerotrain/config/nearest_name.h"

namespace zt::config {
namespace {

TEST(NearestName, EditDistance) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("stage3_prefetch_bucket_sise", "stage3_prefetch_bucket_size"), 1u);
  EXPECT_EQ(edit_distance("flaw", "lawn"), 2u);
}

TEST(NearestName, SuggestsOnlyPlausibleTypos) {
  const std::vector<std::string> keys = {"stage", "reduce_bucket_size", "allgather_bucket_size",
                                         "overlap_comm"};
  EXPECT_EQ(nearest_name("reduce_bucket_sise", keys), "reduce_bucket_size");
  EXPECT_EQ(nearest_name("overlapcomm", keys), "overlap_comm");
  EXPECT_EQ(nearest_name("STAGE", keys), "stage");
  EXPECT_EQ(nearest_name("completely_different", keys), std::nullopt);
  EXPECT_EQ(nearest_name("x", {}), std::nullopt);
}

}  // namespace
}  // namespace zt::config
