// comm/shard_layout: shard sizes, offsets and padding of a flat buffer over W ranks.
#include <gtest/gtest.h>

#include "zerotrain/comm/shard_layout.h"
#include "zerotrain/core/error.h"

namespace zt::comm {
namespace {

TEST(ShardLayout, EvenSplitHasNoPadding) {
  ShardLayout l = shard_layout(12, 4);
  EXPECT_EQ(l.shard_numel, 3u);
  EXPECT_EQ(l.padded_numel, 12u);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(l.offset(r), 3u * static_cast<size_t>(r));
    EXPECT_EQ(l.valid_numel(r), 3u);
    EXPECT_EQ(l.padding(r), 0u);
  }
}

TEST(ShardLayout, UnevenSplitPadsTheTail) {
  ShardLayout l = shard_layout(10, 4);  // shards of 3: 3, 3, 3, 1 real elements
  EXPECT_EQ(l.shard_numel, 3u);
  EXPECT_EQ(l.padded_numel, 12u);
  EXPECT_EQ(l.valid_numel(2), 3u);
  EXPECT_EQ(l.valid_numel(3), 1u);
  EXPECT_EQ(l.padding(3), 2u);
  EXPECT_EQ(l.offset(3), 9u);
}

TEST(ShardLayout, FewerElementsThanRanksLeavesEmptyShards) {
  ShardLayout l = shard_layout(2, 4);
  EXPECT_EQ(l.shard_numel, 1u);
  EXPECT_EQ(l.valid_numel(1), 1u);
  EXPECT_EQ(l.valid_numel(2), 0u);
  EXPECT_EQ(l.valid_numel(3), 0u);
  ShardLayout empty = shard_layout(0, 3);
  EXPECT_EQ(empty.shard_numel, 0u);
  EXPECT_EQ(empty.valid_numel(0), 0u);
}

TEST(ShardLayout, ValidElementsCoverTheBufferExactlyOnce) {
  for (size_t n : {1u, 7u, 64u, 1001u})
    for (int w : {1, 2, 3, 4, 7}) {
      ShardLayout l = shard_layout(n, w);
      size_t total = 0;
      for (int r = 0; r < w; ++r) {
        if (l.valid_numel(r) > 0) {
          EXPECT_EQ(l.offset(r), total) << n << " " << w;
        }
        total += l.valid_numel(r);
      }
      EXPECT_EQ(total, n);
      EXPECT_LT(l.padded_numel - n, static_cast<size_t>(w));
    }
}

TEST(ShardLayout, RejectsBadWorldSize) {
  EXPECT_THROW(shard_layout(10, 0), ValueError);
}

}  // namespace
}  // namespace zt::comm
