// The transaction log of a wandb run (run-<id>.wandb), written as wandb's own datastore writes it
// (wandb/sdk/internal/datastore.py, after LevelDB's log format); see [Note: wandb datastore].
// Tested by tests/monitor/test_wandb_offline.cpp and, with wandb's reader,
// tools/parity/check_wandb.py.
//
// [Note: wandb datastore]
// The file starts with a 7-byte header: ":W&B", the magic 0xBEE1 (u16 LE), version 0. It is then
// cut into 32 KiB blocks counted from the start of the file (header included). Each record is a
// 7-byte header — checksum (u32 LE: zlib's CRC-32 of the type byte followed by the data), length
// (u16 LE), type (1 FULL, 2 FIRST, 3 MIDDLE, 4 LAST) — and its data. A payload that does not fit
// in the rest of the block is split FIRST / MIDDLE... / LAST across blocks; a block tail shorter
// than a record header is zero-filled. Each payload is one serialized wandb_internal.Record.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace zt::monitor {

class WandbDataStore {
 public:
  static constexpr int64_t kBlockBytes = 32768;
  static constexpr int64_t kHeaderBytes = 7;

  // Creates the file (which must not exist) and writes its header. Throws zt::Error("wandb").
  explicit WandbDataStore(const std::filesystem::path& path);

  // Appends one payload, split over blocks as needed, and flushes it.
  void write(std::string_view payload);
  const std::filesystem::path& path() const { return path_; }

 private:
  void write_chunk(std::string_view data, uint8_t type);

  std::filesystem::path path_;
  std::ofstream out_;
  int64_t offset_ = 0;  // bytes written so far
};

}  // namespace zt::monitor
