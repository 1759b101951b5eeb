// The in-memory shard store; see shard_checkpoint.h.
#include "zerotrain/zero/shard_checkpoint.h"

#include "zerotrain/core/error.h"

namespace zt::zero {

void MemoryShardStore::write(const ShardRange& range, const Tensor& data, Stream stream) {
  if (data.numel() != range.end - range.begin)
    throw ValueError(
        "zero", str(range.name, " [", range.begin, ", ", range.end, "): got ", data.describe()));
  const Tensor host = data.to(Device::cpu(), stream);
  synchronize(stream);
  tensors_[{range.name, range.begin, range.end}] = host.clone();
}

void MemoryShardStore::read(const ShardRange& range, Tensor& dst, Stream stream) {
  const auto it = tensors_.find({range.name, range.begin, range.end});
  if (it == tensors_.end())
    throw ValueError(
        "zero", str(range.name, " [", range.begin, ", ", range.end, "): not in this shard store"));
  if (it->second.dtype() != dst.dtype() || it->second.numel() != dst.numel())
    throw ValueError("zero", str(range.name, ": stored ", it->second.describe(), ", reading into ",
                                 dst.describe()));
  dst.copy_from(it->second, stream);
}

}  // namespace zt::zero
