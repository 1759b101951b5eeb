// How a flat buffer of `numel` elements is cut into W equal, padded shards for reduce_scatter /
// all_gather. Tested by tests/comm/test_shard_layout.cpp.
#pragma once

#include <cstddef>

namespace zt::comm {

// [Note: shard padding] Rank r owns elements [r * shard, (r + 1) * shard) of the flat buffer,
// shard = ceil(numel / W). The buffer is padded to padded_numel = shard * W; the tail ranks' shards
// hold fewer real elements (possibly none) and the rest is padding, which callers keep at zero so a
// reduction of padding stays zero. Collectives always move whole shards.
struct ShardLayout {
  size_t numel = 0;         // real elements of the flat buffer
  int world_size = 1;       // W
  size_t shard_numel = 0;   // elements per shard, padding included
  size_t padded_numel = 0;  // shard_numel * W

  size_t offset(int rank) const;       // first element of rank's shard in the padded buffer
  size_t valid_numel(int rank) const;  // real (unpadded) elements in rank's shard
  size_t padding(int rank) const { return shard_numel - valid_numel(rank); }
};

// Throws ValueError for world_size < 1.
ShardLayout shard_layout(size_t numel, int world_size);

}  // namespace zt::comm
