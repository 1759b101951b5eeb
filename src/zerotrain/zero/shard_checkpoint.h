// The seam of sharded checkpoints: each ZeRO stage writes and reads its own rank's shard (values,
// masters, moments of every piece it steps, and the step) as named tensors with the element
// ranges of the full flattened tensors they cover, through a ShardWriter / ShardReader
// (ZeroStage::save_shard / load_shard). On disk: checkpoint/ (checkpoint::RankShard and
// checkpoint::CheckpointReader, [Note: sharded checkpoint format] in checkpoint/manifest.h);
// MemoryShardStore keeps shards in host memory. Tested by tests/zero/test_zero_shard_checkpoint.cpp
// and tests/mpi/test_zero_shard_checkpoint.cpp.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>

#include "zerotrain/core/stream.h"
#include "zerotrain/core/tensor.h"

namespace zt::zero {

// Elements [begin, end) of the row-major flattened full tensor `name` of shape `full_shape`.
struct ShardRange {
  std::string name;  // "<param>" (its value) or "<param><suffix>" (optim/state_slots.h)
  Shape full_shape;
  int64_t begin = 0, end = 0;
};

class ShardWriter {
 public:
  virtual ~ShardWriter() = default;
  virtual void write_step(int64_t step) = 0;
  // `data`: [end - begin] on any device; the writer copies what it keeps before returning.
  virtual void write(const ShardRange& range, const Tensor& data, Stream stream) = 0;
};

class ShardReader {
 public:
  virtual ~ShardReader() = default;
  virtual int64_t read_step() = 0;
  // Fills `dst` ([end - begin], its dtype and device) with what was written for `range`. Throws
  // ValueError naming the range when there is none.
  virtual void read(const ShardRange& range, Tensor& dst, Stream stream) = 0;
};

// Both ends in host memory: what one rank wrote, readable by an engine of the same layout.
class MemoryShardStore final : public ShardWriter, public ShardReader {
 public:
  void write_step(int64_t step) override { step_ = step; }
  void write(const ShardRange& range, const Tensor& data, Stream stream) override;
  int64_t read_step() override { return step_; }
  void read(const ShardRange& range, Tensor& dst, Stream stream) override;
  size_t size() const { return tensors_.size(); }

 private:
  int64_t step_ = 0;
  std::map<std::tuple<std::string, int64_t, int64_t>, Tensor> tensors_;  // host copies
};

}  // namespace zt::zero
