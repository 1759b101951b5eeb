// Token files (.bin): the tokenized training corpus, one flat little-endian array of token ids
// after a fixed header. Documents follow each other, each ended by the header's eos id when the
// file has one. Layout of the 64-byte header:
//   0  char[8] magic "ZTTOKENS"     24 u64 num_tokens       44 u32 eos_id (0xFFFFFFFF: none)
//   8  u32 version (1 or 2)         32 u64 num_documents    48 u64 flags_offset (version 2; else 0)
//   12 u32 token_bytes (2 or 4)     40 u32 header_size (64; tokens start here)
//   16 u64 vocab_size               56 u8[8] reserved (zero)
// Tokens are uint16 when vocab_size <= 65536, else uint32.
//
// [Note: token flags] Version 2 adds one flags byte per token after the tokens, at flags_offset
// (= header_size + num_tokens x token_bytes; the file ends after num_tokens flag bytes):
//   bit 0 (kTokenCountsAsTarget): the loss counts this token where it is a target (the token
//         predicted from the one before it); clear for prompt, system and user tokens, which the
//         data loader turns into the ignore index -100, as labels in transformers;
//   bit 1 (kTokenStartsDocument): the first token of a document (an example): packed rows mark it
//         so that attention does not cross it and position ids restart there. A document's first
//         token is never a counted target (nothing of its document comes before it).
//   Other bits are zero. The first token starts a document, and the number of tokens that start
//   one is num_documents (TokenFile::check_tokens checks all of this; opening checks the sizes).
// `zerotrain data prepare` writes version 2 only for data with loss masks (chat and
// prompt/completion records); plain text keeps version 1, whose every target counts and whose
// rows are unbroken streams. TokenFile reads either through a read-only memory map,
// TokenFileWriter writes one atomically (temporary file, fsync, rename).
// Tested in tests/data/test_token_file.cpp and test_token_file_v2.cpp.
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
inline constexpr uint32_t kTokenFileVersion = 1;          // tokens only
inline constexpr uint32_t kTokenFileVersionFlags = 2;     // tokens + a flags byte per token
inline constexpr uint8_t kTokenCountsAsTarget = 1;         // See [Note: token flags]
inline constexpr uint8_t kTokenStartsDocument = 2;
inline constexpr uint8_t kTokenKnownFlags = kTokenCountsAsTarget | kTokenStartsDocument;
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
  uint64_t flags_offset = 0;       // version 2: where the flags bytes start; version 1: 0

  bool has_flags() const { return version == kTokenFileVersionFlags; }
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
  // Version 2: the flags byte of token i (See [Note: token flags]); a version 1 file has none.
  bool has_flags() const { return flags_ != nullptr; }
  uint8_t flags(uint64_t i) const { return flags_[i]; }
  // Flags of tokens [start, start + count) into `out`; throws TokenFileError past the end or for a
  // version 1 file.
  void read_flags(uint64_t start, uint64_t count, uint8_t* out) const;
  // Tokens [start, start + count) as int32 into `out`; throws TokenFileError past the end.
  void read(uint64_t start, uint64_t count, int32_t* out) const;
  std::vector<uint32_t> read(uint64_t start, uint64_t count) const;
  // Throws TokenFileError naming the file, the first token (index and byte offset) that is not
  // below the header's vocab_size nor `model_vocab_size`, its id and the bound: a full scan over
  // OpenMP threads. For version 2 it then checks the flags as [Note: token flags] says (the first
  // bad byte named with its index and value). The trainer calls it before the first step.
  void check_tokens(uint64_t model_vocab_size = UINT64_MAX) const;
  // Version 2: how many tokens count as targets (a full scan of the flags); version 1, one
  // unbroken stream: every token but the first.
  uint64_t counted_targets() const;

 private:
  void check_range(uint64_t start, uint64_t count) const;
  void check_flags() const;

  std::filesystem::path path_;
  TokenFileHeader header_;
  void* map_ = nullptr;
  size_t map_bytes_ = 0;
  const uint8_t* tokens_ = nullptr;
  const uint8_t* flags_ = nullptr;  // version 2 only
};

// Writes a token file document by document. Nothing appears at `path` until finish(): the data go
// to a temporary file beside it that is fsync'ed and renamed over `path` (a version 2 file's flags
// go to a second temporary file, appended at finish()). A writer destroyed before finish() removes
// its temporary files.
class TokenFileWriter {
 public:
  // `with_flags`: write version 2 (a loss mask and document starts); else version 1.
  TokenFileWriter(std::filesystem::path path, uint64_t vocab_size, std::optional<uint32_t> eos_id,
                  bool with_flags = false);
  ~TokenFileWriter();
  TokenFileWriter(const TokenFileWriter&) = delete;
  TokenFileWriter& operator=(const TokenFileWriter&) = delete;

  // Appends the tokens, then the eos id when the file has one. Throws TokenFileError for a token
  // that is not below vocab_size.
  // Version 1 only.
  void write_document(std::span<const uint32_t> tokens);
  // Version 2 only: `counts[i]` nonzero where token i counts as a target (as big as `tokens`). The
  // first token gets kTokenStartsDocument and never counts; the appended eos counts when the
  // document's last token does (the model learns to stop after an answer). An empty document
  // without an eos writes nothing and is not counted.
  void write_document(std::span<const uint32_t> tokens, std::span<const uint8_t> counts);
  // Completes the file; returns its header.
  const TokenFileHeader& finish();
  const TokenFileHeader& header() const { return header_; }
  // Version 2: tokens written with kTokenCountsAsTarget.
  uint64_t target_tokens() const { return target_tokens_; }

 private:
  void append(uint32_t token);
  void append_flags(uint8_t flags);
  void flush_buffer();
  void flush_flags_buffer();
  void check_vocab(std::span<const uint32_t> tokens) const;
  void append_flags_section();

  std::filesystem::path path_;
  std::filesystem::path temp_path_;
  std::filesystem::path flags_temp_path_;  // version 2
  int flags_fd_ = -1;
  std::vector<uint8_t> flags_buffer_;
  uint64_t target_tokens_ = 0;
  TokenFileHeader header_;
  int fd_ = -1;
  std::vector<uint8_t> buffer_;
  bool finished_ = false;
};

}  // namespace zt::data
