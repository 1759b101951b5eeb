// A model's weights in a directory, in the Hugging Face layout: one model.safetensors, or shards
// model-0000i-of-0000n.safetensors with model.safetensors.index.json
// ({"metadata": {"total_size": bytes, ...}, "weight_map": {tensor: file}}). The reader opens either
// (model.safetensors first when both exist, as transformers does); the writer splits tensors into
// shards by a maximum shard size exactly as huggingface_hub's split_state_dict_into_shards does.
// Tested by tests/io/test_sharded_safetensors.cpp.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "zerotrain/io/safetensors.h"

namespace zt::io {

inline constexpr const char* kWeightsFile = "model.safetensors";
inline constexpr const char* kWeightsIndexFile = "model.safetensors.index.json";
inline constexpr uint64_t kDefaultMaxShardBytes = 5'000'000'000;  // transformers' "5GB"

class ShardedReader {
 public:
  // Opens and validates every file; problems are FormatError/IoError naming the file and tensor.
  explicit ShardedReader(const std::filesystem::path& dir);

  const std::filesystem::path& dir() const { return dir_; }
  bool sharded() const { return sharded_; }
  std::optional<uint64_t> total_size() const { return total_size_; }  // from the index
  const std::vector<SafetensorsReader>& files() const { return files_; }

  std::vector<std::string> names() const;  // sorted
  bool contains(const std::string& name) const { return where_.count(name) != 0; }
  const SafetensorsEntry& entry(const std::string& name) const;
  const SafetensorsReader& file_of(const std::string& name) const;  // ValueError when absent

  // As SafetensorsReader's, on the file that holds `name`.
  void read(const std::string& name, const Tensor& dst, Stream stream = {}) const;
  Tensor read(const std::string& name, DType dtype, Device device = Device::cpu(),
              Stream stream = {}) const;
  void read_rows(const std::string& name, int64_t r0, int64_t r1, const Tensor& dst,
                 Stream stream = {}) const;
  void read_elements(const std::string& name, int64_t begin, int64_t end, const Tensor& dst,
                     Stream stream = {}) const;
  // Tensor-data bytes read so far, over every file (SafetensorsReader::bytes_read).
  uint64_t bytes_read() const;

 private:
  void open_index(const std::filesystem::path& index_path);

  std::filesystem::path dir_;
  bool sharded_ = false;
  std::optional<uint64_t> total_size_;
  std::vector<SafetensorsReader> files_;
  std::unordered_map<std::string, size_t> where_;  // tensor -> files_ index
};

// Tensor i of `nbytes` goes, in order, into the current shard unless that would pass
// max_shard_bytes (then a new shard starts); a tensor larger than the limit gets a shard of its
// own.
struct ShardPlan {
  std::vector<std::vector<size_t>> shards;  // tensor indices per shard, in file order
  uint64_t total_size = 0;                  // sum of nbytes
};
ShardPlan plan_shards(const std::vector<uint64_t>& nbytes, uint64_t max_shard_bytes);

// "model-00002-of-00005.safetensors" (index 1 of 5); "model.safetensors" when count == 1.
std::string shard_file_name(size_t index, size_t count);

// Writes `tensors` (in this order for the split) into `dir` (created if needed) as one
// model.safetensors or as shards plus the index (keys sorted, indented by 2, as transformers writes
// it), each file atomically, the index last; then removes weight files of an earlier save that the
// new one does not use. Returns the weight file names written. A crash while replacing a sharded
// checkpoint by one with the same shard count can leave old and new shards mixed: write into a
// fresh directory when that matters.
std::vector<std::string> write_sharded_safetensors(const std::filesystem::path& dir,
                                                   const std::vector<NamedTensor>& tensors,
                                                   uint64_t max_shard_bytes,
                                                   const SafetensorsWriteOptions& options = {});

}  // namespace zt::io
