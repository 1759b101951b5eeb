// One rank's shard on disk ([Note: sharded checkpoint format] in manifest.h): RankShard collects
// the host copies the ZeRO stage hands out (zero::ShardWriter; the device-to-host copy is all a
// save blocks training for), write_rank_file writes them as one safetensors file with its marker.
// Tested by tests/checkpoint/test_checkpoint_files.cpp.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "zerotrain/checkpoint/manifest.h"
#include "zerotrain/core/dtype.h"
#include "zerotrain/zero/shard_checkpoint.h"

namespace zt::checkpoint {

// What a rank's shard will hold, piece by piece, without copying anything (ShardPlan), so its
// host buffers can be made before the first save (RankShard::with_buffers).
struct PieceSpec {
  std::string name;
  int64_t numel = 0;
  DType dtype = DType::f32;
  bool on_gpu = false;
};

class ShardPlan final : public zero::ShardWriter {
 public:
  void write_step(int64_t) override {}
  void write(const zero::ShardRange& range, const Tensor& data, Stream) override {
    specs_.push_back({range.name, data.numel(), data.dtype(), data.device().is_cuda()});
  }
  const std::vector<PieceSpec>& specs() const { return specs_; }

 private:
  std::vector<PieceSpec> specs_;
};

class RankShard final : public zero::ShardWriter {
 public:
  // An empty shard holding host buffers for `specs` (page-locked for GPU pieces), as a first save
  // would allocate them: given to reuse_buffers, they spare that save the allocation.
  static RankShard with_buffers(const std::vector<PieceSpec>& specs);

  void write_step(int64_t step) override { step_ = step; }
  // Copies `data` into host memory (waiting for a device copy); a name given twice is an error.
  void write(const zero::ShardRange& range, const Tensor& data, Stream stream) override;
  // The host buffers of an earlier shard, taken over by write() for the pieces of the same name,
  // size and dtype: a save into memory already mapped skips the allocation and its page faults,
  // most of the time a save blocks training for.
  void reuse_buffers(RankShard&& earlier);

  int64_t step() const { return step_; }
  struct Piece {
    zero::ShardRange range;
    Tensor host;  // [end - begin] on the CPU
  };
  const std::vector<Piece>& pieces() const { return pieces_; }
  uint64_t bytes() const;

 private:
  int64_t step_ = 0;
  std::vector<Piece> pieces_;
  std::map<std::string, Tensor> spare_;  // reuse_buffers' tensors not taken yet
};

// "rank-00001-of-00004.safetensors"; the marker "rank-00001.json"; a failed write's note
// "rank-00001.failed".
std::string rank_file_name(int rank, int world);
std::string rank_marker_name(int rank);
std::string rank_failure_name(int rank);

// Writes `shard` into `dir` as rank_file_name(rank, world) (atomically, fsynced), then the marker
// holding its SavedFile entry (checksums of every piece); returns the entry.
SavedFile write_rank_file(const std::filesystem::path& dir, int rank, int world,
                          const RankShard& shard);

}  // namespace zt::checkpoint
