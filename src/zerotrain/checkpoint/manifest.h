// The manifest of a sharded checkpoint (`<out>/checkpoints/<tag>/manifest.json`): what was saved,
// by which layout, and every file's size and tensors with their checksums. The one reader and
// writer of that JSON; every field is checked on read with one line naming the key. Tested by
// tests/checkpoint/test_checkpoint_files.cpp.
//
// [Note: sharded checkpoint format]
// - Each rank writes one safetensors file of its own shard ("rank-00001-of-00004.safetensors"):
//   values, masters and moments of every parameter piece its optimizer steps, each under the name
//   of the full tensor ("<param>" for the value, "<param><suffix>" for a state slot of
//   optim/state_slots.h), covering the elements [begin, end) of that tensor flattened row-major.
//   Stage 0 is sharded over a world of one: rank 0 writes everything, the others nothing.
// - A piece's range, dtype and CRC-32 (zlib's, of its stored bytes) are in the manifest, so a
//   reader can assemble any range of any tensor from whichever files hold it: a checkpoint resumes
//   at another world size or stage directly, and a universal checkpoint (one file per parameter,
//   whole tensors) is the same format with other files.
// - A rank's file is followed by its marker (rank-NNNNN.json: the file's entry); rank 0 writes the
//   manifest once every marker is there, then the COMPLETE marker. Only a directory with COMPLETE
//   is a checkpoint; `latest` names the newest one (checkpoint_store.h).
// - With stage3_gather_16bit_weights_on_model_save, rank 0 also writes the model's Hugging Face
//   weights in the training dtype into "model/" (gathered one group at a time) before the
//   manifest, which names their dtype; they are a copy for users, never read by a resume.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "zerotrain/core/dtype.h"
#include "zerotrain/core/tensor.h"

namespace zt::checkpoint {

inline constexpr const char* kFormatName = "zerotrain-sharded-checkpoint";
inline constexpr int kFormatVersion = 1;
inline constexpr const char* kManifestName = "manifest.json";
inline constexpr const char* kCompleteName = "COMPLETE";
inline constexpr const char* kWeightsDir = "model";

// One stored piece: elements [begin, end) of the full tensor `name` of shape `full_shape`.
struct SavedTensor {
  std::string name;
  Shape full_shape;
  int64_t begin = 0, end = 0;
  DType dtype = DType::f32;
  uint32_t crc32 = 0;  // of its stored bytes
};

struct SavedFile {
  std::string name;  // a file in the checkpoint directory
  int rank = 0;      // the rank that wrote it (-1: written by a conversion)
  uint64_t bytes = 0;
  std::vector<SavedTensor> tensors;
};

struct Manifest {
  int version = kFormatVersion;
  std::string tag;
  int64_t step = 0;            // training steps done
  int64_t optimizer_step = 0;  // updates the optimizer took (fewer when steps were skipped)
  int world_size = 1;
  int stage = 0;
  bool universal = false;  // rewritten per parameter (`zerotrain checkpoint universal`)
  DType dtype = DType::f32;        // the parameters' dtype
  std::string precision = "mixed";  // optim::precision_name
  std::string model_config;         // the model's config.json text (io::hf_config_json); the
                                    // JSON adds its CRC-32, checked on read
  nlohmann::json train_state;       // the trainer's state: data position, scheduler, loss scaler
  std::vector<SavedFile> files;
  // Set when the checkpoint also holds the model's Hugging Face weights in kWeightsDir, in this
  // dtype (stage3_gather_16bit_weights_on_model_save; checkpoint/gathered_weights.h).
  std::optional<DType> weights_dtype;
};

nlohmann::json to_json(const SavedFile& f);
nlohmann::json to_json(const Manifest& m);
// Throws FormatError "[checkpoint] <where>: <key> ..." for a missing or malformed field.
SavedFile saved_file_from_json(const nlohmann::json& j, const std::string& where);
Manifest manifest_from_json(const nlohmann::json& j, const std::string& where);

// How errors in a checkpoint's model config name it: "`dir`/manifest.json: model_config".
inline std::string model_config_source(const std::filesystem::path& dir) {
  return (dir / kManifestName).string() + ": model_config";
}

// `dir`/manifest.json: read and checked (format name and version, every field). Throws
// FormatError naming the file and key; ValueError when the version is newer than this build's.
Manifest read_manifest(const std::filesystem::path& dir);
// Written atomically.
void write_manifest(const std::filesystem::path& dir, const Manifest& m);

// CRC-32 (zlib) of `n` bytes, continuing from `crc` (0 to start).
uint32_t crc32_of(const void* data, size_t n, uint32_t crc = 0);
std::string crc32_hex(uint32_t crc);  // 8 lower-case hex digits

}  // namespace zt::checkpoint
