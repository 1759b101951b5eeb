// Reading a sharded checkpoint ([Note: sharded checkpoint format] in manifest.h) at any layout:
// any element range of any saved tensor is assembled from whichever files hold it, so a run of
// another world size or ZeRO stage reads only its own shard, and a universal checkpoint reads the
// same way. Every piece is checked against its CRC-32 the first time it is read; a mismatch or a
// file of the wrong size is one line naming the file and tensor. Tested by
// tests/checkpoint/test_checkpoint_files.cpp and tests/mpi/test_sharded_checkpoint.cpp.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "zerotrain/checkpoint/manifest.h"
#include "zerotrain/io/safetensors.h"
#include "zerotrain/zero/shard_checkpoint.h"

namespace zt::checkpoint {

class CheckpointReader final : public zero::ShardReader {
 public:
  // `dir`: a complete checkpoint (COMPLETE present). Reads its manifest and checks every file's
  // size; throws ValueError when the checkpoint is not complete, FormatError naming the file.
  explicit CheckpointReader(const std::filesystem::path& dir);

  const Manifest& manifest() const { return manifest_; }
  const std::filesystem::path& dir() const { return dir_; }

  int64_t read_step() override { return manifest_.optimizer_step; }
  // Fills `dst` ([end - begin], contiguous, the stored dtype, any device) from the pieces that
  // cover the range. Throws ValueError naming the tensor when it is absent, of another shape or
  // dtype, or not covered; FormatError naming the file when a checksum fails.
  void read(const zero::ShardRange& range, Tensor& dst, Stream stream) override;

  // The full tensors, sorted by name, with their shape and stored dtype.
  struct TensorInfo {
    Shape shape;
    DType dtype = DType::f32;
  };
  const std::map<std::string, TensorInfo>& tensors() const { return info_; }
  // Checks every piece's checksum; returns one line per bad piece or file (empty: all good).
  std::vector<std::string> verify_all();

 private:
  struct Located {
    size_t file;
    SavedTensor tensor;
  };
  const io::SafetensorsReader& file(size_t i);
  // Throws FormatError naming the file and tensor when `piece` fails its checksum.
  void verify(const Located& piece);

  std::filesystem::path dir_;
  Manifest manifest_;
  std::map<std::string, std::vector<Located>> pieces_;  // by tensor name, in begin order
  std::map<std::string, TensorInfo> info_;
  std::vector<std::optional<io::SafetensorsReader>> files_;  // opened on first use
  std::set<std::pair<size_t, std::string>> verified_;
};

}  // namespace zt::checkpoint
