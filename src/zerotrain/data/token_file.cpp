// Token file header codec and the memory-mapped reader.
#include "zerotrain/data/token_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <algorithm>
#include <cstring>

#include "zerotrain/core/files.h"

namespace zt::data {

static_assert(std::endian::native == std::endian::little,
              "token files are little-endian and are read in place");

namespace {

template <typename T>
void put(uint8_t* p, size_t offset, T v) {
  std::memcpy(p + offset, &v, sizeof(T));
}
template <typename T>
T get(const uint8_t* p, size_t offset) {
  T v;
  std::memcpy(&v, p + offset, sizeof(T));
  return v;
}

std::string printable(std::span<const uint8_t> bytes) {
  std::string s;
  for (uint8_t b : bytes) {
    if (b >= 0x20 && b < 0x7F) {
      s.push_back(static_cast<char>(b));
    } else {
      s += str("\\x", "0123456789abcdef"[b >> 4], "0123456789abcdef"[b & 15]);
    }
  }
  return s;
}

}  // namespace

uint32_t token_bytes_for_vocab(uint64_t vocab_size) {
  return vocab_size <= 65536 ? 2 : 4;
}

std::array<uint8_t, kTokenFileHeaderSize> encode_token_file_header(const TokenFileHeader& h) {
  std::array<uint8_t, kTokenFileHeaderSize> b{};
  std::memcpy(b.data(), kTokenFileMagic.data(), kTokenFileMagic.size());
  put(b.data(), 8, h.version);
  put(b.data(), 12, h.token_bytes);
  put(b.data(), 16, h.vocab_size);
  put(b.data(), 24, h.num_tokens);
  put(b.data(), 32, h.num_documents);
  put(b.data(), 40, h.header_size);
  put(b.data(), 44, h.eos_id.value_or(kTokenFileNoEos));
  put(b.data(), 48, h.flags_offset);
  return b;
}

TokenFileHeader decode_token_file_header(std::span<const uint8_t> b, uint64_t file_size,
                                         const std::string& path) {
  auto fail = [&](const std::string& field, const std::string& msg) -> TokenFileError {
    return TokenFileError(str(path, ": ", field, ": ", msg));
  };
  if (b.size() < kTokenFileHeaderSize || file_size < kTokenFileHeaderSize)
    throw TokenFileError(str(path, ": ", file_size, " bytes, shorter than the ",
                             kTokenFileHeaderSize, "-byte header of a token file"));
  if (std::memcmp(b.data(), kTokenFileMagic.data(), kTokenFileMagic.size()) != 0)
    throw fail("magic", str("expected \"ZTTOKENS\", got \"", printable(b.first(8)),
                            "\": not a zerotrain token file"));
  TokenFileHeader h;
  h.version = get<uint32_t>(b.data(), 8);
  h.token_bytes = get<uint32_t>(b.data(), 12);
  h.vocab_size = get<uint64_t>(b.data(), 16);
  h.num_tokens = get<uint64_t>(b.data(), 24);
  h.num_documents = get<uint64_t>(b.data(), 32);
  h.header_size = get<uint32_t>(b.data(), 40);
  const auto eos = get<uint32_t>(b.data(), 44);
  if (eos != kTokenFileNoEos) h.eos_id = eos;
  h.flags_offset = get<uint64_t>(b.data(), 48);

  if (h.version != kTokenFileVersion && h.version != kTokenFileVersionFlags)
    throw fail("version", str("expected ", kTokenFileVersion, " or ", kTokenFileVersionFlags,
                              ", got ", h.version));
  if (h.token_bytes != 2 && h.token_bytes != 4)
    throw fail("token_bytes", str("expected 2 or 4, got ", h.token_bytes));
  if (h.vocab_size == 0) throw fail("vocab_size", "must be positive, got 0");
  if (h.token_bytes == 2 && h.vocab_size > 65536)
    throw fail("token_bytes", str("2-byte tokens cannot hold vocab_size ", h.vocab_size));
  if (h.header_size < kTokenFileHeaderSize || h.header_size % h.token_bytes != 0 ||
      h.header_size > file_size)
    throw fail("header_size",
               str("expected at least ", kTokenFileHeaderSize, ", a multiple of ", h.token_bytes,
                   " and within the file (", file_size, " bytes), got ", h.header_size));
  const uint64_t data_bytes = file_size - h.header_size;
  // Version 2 holds a flags byte per token besides the token.
  const uint64_t bytes_per_token = h.token_bytes + (h.has_flags() ? 1 : 0);
  if (h.num_tokens > data_bytes / bytes_per_token || h.num_tokens * bytes_per_token != data_bytes)
    throw fail("num_tokens",
               str(h.num_tokens, " tokens of ", h.token_bytes, " bytes",
                   h.has_flags() ? " and a flags byte" : "", ", but the file has ", data_bytes,
                   " bytes after the header (truncated or overlong file)"));
  const uint64_t flags_at = h.header_size + h.num_tokens * h.token_bytes;
  if (h.has_flags() && h.flags_offset != flags_at)
    throw fail("flags_offset", str("expected ", flags_at, " (the end of the tokens), got ",
                                   h.flags_offset));
  if (!h.has_flags() && h.flags_offset != 0)
    throw fail("flags_offset", str("must be 0 in a version 1 file, got ", h.flags_offset));
  if (h.eos_id && *h.eos_id >= h.vocab_size)
    throw fail("eos_id", str(*h.eos_id, " is not below vocab_size ", h.vocab_size));
  return h;
}

TokenFile::TokenFile(const std::filesystem::path& path) : path_(path) {
  const std::string name = path.string();
  if (const std::string kind = non_regular_kind(path); !kind.empty())
    throw TokenFileError(str(name, ": ", kind, ", not a regular file"));
  const int fd = open_read_only(path);
  if (fd < 0) throw TokenFileError(str(name, ": cannot open: ", std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw TokenFileError(str(name, ": cannot stat: ", std::strerror(err)));
  }
  const auto file_size = static_cast<uint64_t>(st.st_size);
  if (file_size < kTokenFileHeaderSize) {
    ::close(fd);
    throw TokenFileError(str(name, ": ", file_size, " bytes, shorter than the ",
                             kTokenFileHeaderSize, "-byte header of a token file"));
  }
  void* map = ::mmap(nullptr, file_size, PROT_READ, MAP_SHARED, fd, 0);
  const int err = errno;
  ::close(fd);
  if (map == MAP_FAILED) throw TokenFileError(str(name, ": cannot map: ", std::strerror(err)));
  map_ = map;
  map_bytes_ = file_size;
  try {
    header_ =
        decode_token_file_header({static_cast<const uint8_t*>(map), file_size}, file_size, name);
  } catch (...) {
    ::munmap(map_, map_bytes_);
    throw;
  }
  tokens_ = static_cast<const uint8_t*>(map) + header_.header_size;
  if (header_.has_flags()) flags_ = static_cast<const uint8_t*>(map) + header_.flags_offset;
}

TokenFile::~TokenFile() {
  if (map_) ::munmap(map_, map_bytes_);
}

void TokenFile::check_range(uint64_t start, uint64_t count) const {
  if (start > size() || count > size() - start)
    throw TokenFileError(str(path_.string(), ": tokens [", start, ", ", start + count,
                             ") are past the end (", size(), " tokens)"));
}

void TokenFile::read(uint64_t start, uint64_t count, int32_t* out) const {
  check_range(start, count);
  if (header_.vocab_size > (uint64_t{1} << 31))
    throw TokenFileError(str(path_.string(), ": vocab_size ", header_.vocab_size,
                             " has ids that do not fit in int32"));
  if (header_.token_bytes == 2) {
    const auto* p = reinterpret_cast<const uint16_t*>(tokens_) + start;
    for (uint64_t i = 0; i < count; ++i)
      out[i] = p[i];
  } else {
    const auto* p = reinterpret_cast<const uint32_t*>(tokens_) + start;
    for (uint64_t i = 0; i < count; ++i)
      out[i] = static_cast<int32_t>(p[i]);
  }
}

void TokenFile::read_flags(uint64_t start, uint64_t count, uint8_t* out) const {
  check_range(start, count);
  if (!flags_)
    throw TokenFileError(str(path_.string(), ": version ", header_.version,
                             " has no flags (loss mask, document starts)"));
  std::copy(flags_ + start, flags_ + start + count, out);
}

std::vector<uint32_t> TokenFile::read(uint64_t start, uint64_t count) const {
  check_range(start, count);
  std::vector<uint32_t> out(count);
  for (uint64_t i = 0; i < count; ++i)
    out[i] = (*this)[start + i];
  return out;
}

namespace {

// The index of the first token in [0, n) at or above `limit`, or n: a parallel scan (each thread
// keeps the smallest bad index of its blocks).
template <typename T>
uint64_t first_token_at_or_above(const T* tokens, uint64_t n, uint64_t limit) {
  uint64_t first = n;
  const auto count = static_cast<int64_t>(n);
#pragma omp parallel for schedule(static) reduction(min : first)
  for (int64_t i = 0; i < count; ++i)
    if (tokens[i] >= limit && static_cast<uint64_t>(i) < first) first = static_cast<uint64_t>(i);
  return first;
}

}  // namespace

void TokenFile::check_tokens(uint64_t model_vocab_size) const {
  const bool model_bound = model_vocab_size < header_.vocab_size;
  const uint64_t limit = model_bound ? model_vocab_size : header_.vocab_size;
  const uint64_t first =
      header_.token_bytes == 2
          ? first_token_at_or_above(reinterpret_cast<const uint16_t*>(tokens_), size(), limit)
          : first_token_at_or_above(reinterpret_cast<const uint32_t*>(tokens_), size(), limit);
  if (first == size()) {
    check_flags();
    return;
  }
  throw TokenFileError(str(path_.string(), ": token ", first, " (byte offset ",
                           header_.header_size + first * header_.token_bytes, ") is ",
                           (*this)[first], ", not below vocab_size ", limit,
                           model_bound ? " (the model's)" : " (the file's header)"));
}

uint64_t TokenFile::counted_targets() const {
  if (!flags_) return size() > 0 ? size() - 1 : 0;
  const auto count = static_cast<int64_t>(size());
  uint64_t targets = 0;
#pragma omp parallel for schedule(static) reduction(+ : targets)
  for (int64_t i = 0; i < count; ++i)
    targets += (flags_[i] & kTokenCountsAsTarget) ? 1 : 0;
  return targets;
}

void TokenFile::check_flags() const {
  if (!flags_) return;
  const uint64_t n = size();
  const auto count = static_cast<int64_t>(n);
  uint64_t first_unknown = n, starts = 0, first_counting_start = n;
#pragma omp parallel for schedule(static) reduction(min : first_unknown, first_counting_start) \
    reduction(+ : starts)
  for (int64_t i = 0; i < count; ++i) {
    const uint8_t f = flags_[i];
    const auto at = static_cast<uint64_t>(i);
    if ((f & ~kTokenKnownFlags) != 0 && at < first_unknown) first_unknown = at;
    if (f & kTokenStartsDocument) {
      ++starts;
      if ((f & kTokenCountsAsTarget) && at < first_counting_start) first_counting_start = at;
    }
  }
  auto hex = [](uint8_t b) {
    return str("0x", "0123456789abcdef"[b >> 4], "0123456789abcdef"[b & 15]);
  };
  auto fail = [&](uint64_t i, const std::string& why) {
    throw TokenFileError(str(path_.string(), ": flags of token ", i, " (byte offset ",
                             header_.flags_offset + i, ") are ", hex(flags_[i]), ": ", why));
  };
  if (first_unknown < n)
    fail(first_unknown, str("unknown bits (known: ", hex(kTokenKnownFlags), ")"));
  if (n > 0 && !(flags_[0] & kTokenStartsDocument))
    fail(0, "the first token must start a document");
  if (first_counting_start < n)
    fail(first_counting_start, "a document's first token cannot count as a target");
  if (starts != header_.num_documents)
    throw TokenFileError(str(path_.string(), ": num_documents: the header says ",
                             header_.num_documents, ", the flags start ", starts, " documents"));
}

}  // namespace zt::data
