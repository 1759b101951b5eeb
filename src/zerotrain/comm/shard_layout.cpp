// Shard sizes and padding of a flat buffer. See [Note: shard padding] in shard_layout.h.
#include "zerotrain/comm/shard_layout.h"

#include <algorithm>

#include "zerotrain/core/error.h"

namespace zt::comm {

ShardLayout shard_layout(size_t numel, int world_size) {
  if (world_size < 1) throw ValueError("comm", str("world size must be >= 1, got ", world_size));
  ShardLayout l;
  l.numel = numel;
  l.world_size = world_size;
  const auto w = static_cast<size_t>(world_size);
  l.shard_numel = (numel + w - 1) / w;
  l.padded_numel = l.shard_numel * w;
  return l;
}

size_t ShardLayout::offset(int rank) const {
  ZT_ASSERT(rank >= 0 && rank < world_size, "comm", "rank ", rank);
  return static_cast<size_t>(rank) * shard_numel;
}

size_t ShardLayout::valid_numel(int rank) const {
  size_t begin = offset(rank);
  return begin >= numel ? 0 : std::min(shard_numel, numel - begin);
}

}  // namespace zt::comm
