// Token files (.bin): the tokenized training corpus, one flat little-endian array of token ids
// after a fixed header. Documents follow each other, each ended by the header's eos id when the
// file has one. Layout of the 64-byte header (version 1):
//   0  char[8] magic "ZTTOKENS"     24 u64 num_tokens       44 u32 eos_id (0xFFFFFFFF: none)
//   8  u32 version (1)              32 u64 num_documents    48 u8[16] reserved (zero)
//   12 u32 token_bytes (2 or 4)     40 u32 header_size (64; tokens start here)
//   16 u64 vocab_size
// Tokens are uint16 when vocab_size <= 65536, else uint32. TokenFile reads a file through a
// read-only memory map, TokenFileWriter writes one atomically (temporary file, fsync, rename).
// Tested in tests/data_pipeline/test_token_file.cpp.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "zerotrain/core/error.h"

namespace zt::data {

// A token file that is missing, malformed or cannot be written; the message names the file and the
// header field, e.g. "[token_file] data/x.bin: version: expected 1, got 7".
class TokenFileError : public Error {
 public:
  explicit TokenFileError(const std::string& message) : Error("token_file", message) {}
};

inline constexpr std::array<char, 8> kTokenFileMagic = {'Z', 'T', 'T', 'O', 'K', 'E', 'N', 'S'};
inline constexpr uint32_t kTokenFileVersion = 1;
inline constexpr uint32_t kTokenFileHeaderSize = 64;
inline constexpr uint32_t kTokenFileNoEos = 0xFFFFFFFFu;

struct TokenFileHeader {
  uint32_t version = kTokenFileVersion;
  uint32_t token_bytes = 2;  // 2: uint16 tokens, 4: uint32 tokens
  uint64_t vocab_size = 0;
  uint64_t num_tokens = 0;
  uint64_t num_documents = 0;
  uint32_t header_size = kTokenFileHeaderSize;
  std::optional<uint32_t> eos_id;  // appended after every document, when set
};

// 2 when every id of the vocabulary fits in uint16, else 4.
uint32_t token_bytes_for_vocab(uint64_t vocab_size);

std::array<uint8_t, kTokenFileHeaderSize> encode_token_file_header(const TokenFileHeader& h);
// Parses and validates a header read from `path` (whose size is `file_size`); throws
// TokenFileError.
TokenFileHeader decode_token_file_header(std::span<const uint8_t> bytes, uint64_t file_size,
                                         const std::string& path);

// A token file opened for reading (memory-mapped, read-only).
class TokenFile {
 public:
  explicit TokenFile(const std::filesystem::path& path);
  ~TokenFile();
  TokenFile(const TokenFile&) = delete;
  TokenFile& operator=(const TokenFile&) = delete;

  const TokenFileHeader& header() const { return header_; }
  const std::filesystem::path& path() const { return path_; }
  uint64_t size() const { return header_.num_tokens; }
  uint64_t vocab_size() const { return header_.vocab_size; }

  uint32_t operator[](uint64_t i) const {
    return header_.token_bytes == 2 ? reinterpret_cast<const uint16_t*>(tokens_)[i]
                                    : reinterpret_cast<const uint32_t*>(tokens_)[i];
  }
  // Tokens [start, start + count) as int32 into `out`; throws TokenFileError past the end.
  void read(uint64_t start, uint64_t count, int32_t* out) const;
  std::vector<uint32_t> read(uint64_t start, uint64_t count) const;
  // Throws TokenFileError naming the file, the first token (index and byte offset) that is not
  // below the header's vocab_size nor `model_vocab_size`, its id and the bound: a full scan over
  // OpenMP threads. The trainer calls it before the first step.
  void check_tokens(uint64_t model_vocab_size = UINT64_MAX) const;

 private:
  void check_range(uint64_t start, uint64_t count) const;

  std::filesystem::path path_;
  TokenFileHeader header_;
  void* map_ = nullptr;
  size_t map_bytes_ = 0;
  const uint8_t* tokens_ = nullptr;
};

// Writes a token file document by document. Nothing appears at `path` until finish(): the data go
// to a temporary file beside it that is fsync'ed and renamed over `path`. A writer destroyed before
// finish() removes its temporary file.
class TokenFileWriter {
 public:
  TokenFileWriter(std::filesystem::path path, uint64_t vocab_size, std::optional<uint32_t> eos_id);
  ~TokenFileWriter();
  TokenFileWriter(const TokenFileWriter&) = delete;
  TokenFileWriter& operator=(const TokenFileWriter&) = delete;

  // Appends the tokens, then the eos id when the file has one. Throws TokenFileError for a token
  // that is not below vocab_size.
  void write_document(std::span<const uint32_t> tokens);
  // Completes the file; returns its header.
  const TokenFileHeader& finish();
  const TokenFileHeader& header() const { return header_; }

 private:
  void append(uint32_t token);
  void flush_buffer();

  std::filesystem::path path_;
  std::filesystem::path temp_path_;
  TokenFileHeader header_;
  int fd_ = -1;
  std::vector<uint8_t> buffer_;
  bool finished_ = false;
};

}  // namespace zt::data
