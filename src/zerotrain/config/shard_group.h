// What zero_optimization.zero_hpz_partition_size means on a world of W ranks, in one place for the
// engine (zero::hybrid_sharding), the estimator (estimate/peak_estimate.cpp) and the out-of-memory
// advice (train/out_of_memory.cpp). Tested by tests/zero/test_shard_group_size.cpp and
// tests/estimate/test_peak_estimate.cpp.
#pragma once

#include <cstdint>

namespace zt::config {

enum class ShardGroupFit {
  plain,   // 1, or W or more (a config written for larger nodes): shards over the whole world
  hybrid,  // a divisor of W between 1 and W: groups of that many consecutive ranks
  invalid  // below 1, or below W without dividing it
};

inline ShardGroupFit shard_group_fit(int64_t group_size, int64_t world_size) {
  if (group_size < 1) return ShardGroupFit::invalid;
  if (group_size == 1 || group_size >= world_size) return ShardGroupFit::plain;
  return world_size % group_size == 0 ? ShardGroupFit::hybrid : ShardGroupFit::invalid;
}

}  // namespace zt::config
