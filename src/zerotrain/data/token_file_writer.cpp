// TokenFileWriter: buffered appends to a temporary file, then header, fsync and an atomic rename.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "zerotrain/data/token_file.h"

namespace zt::data {
namespace {

constexpr size_t kBufferBytes = size_t{1} << 20;

void write_all(int fd, const uint8_t* data, size_t n, const std::string& path) {
  while (n > 0) {
    const ssize_t w = ::write(fd, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      throw TokenFileError(str(path, ": cannot write: ", std::strerror(errno)));
    }
    data += w;
    n -= static_cast<size_t>(w);
  }
}

// fsync of the directory makes the rename itself durable.
void sync_directory(const std::filesystem::path& dir) {
  const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // best effort: some file systems do not allow opening directories
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

TokenFileWriter::TokenFileWriter(std::filesystem::path path, uint64_t vocab_size,
                                 std::optional<uint32_t> eos_id, bool with_flags)
    : path_(std::move(path)) {
  if (vocab_size == 0 || vocab_size > (uint64_t{1} << 32))
    throw TokenFileError(
        str(path_.string(), ": vocab_size must be in [1, 2^32], got ", vocab_size));
  if (eos_id && *eos_id >= vocab_size)
    throw TokenFileError(
        str(path_.string(), ": eos_id ", *eos_id, " is not below vocab_size ", vocab_size));
  header_.vocab_size = vocab_size;
  header_.token_bytes = token_bytes_for_vocab(vocab_size);
  header_.eos_id = eos_id;
  temp_path_ = path_;
  temp_path_ += str(".tmp.", ::getpid());
  fd_ = ::open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw TokenFileError(str(path_.string(), ": cannot create the output (", temp_path_.string(),
                             "): ", std::strerror(errno)));
  if (with_flags) {
    header_.version = kTokenFileVersionFlags;
    flags_temp_path_ = temp_path_;
    flags_temp_path_ += ".flags";
    flags_fd_ = ::open(flags_temp_path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (flags_fd_ < 0)
      throw TokenFileError(str(path_.string(), ": cannot create the flags' temporary file (",
                               flags_temp_path_.string(), "): ", std::strerror(errno)));
    flags_buffer_.reserve(kBufferBytes);
  }
  buffer_.reserve(kBufferBytes);
  // Placeholder header; the real one is written by finish().
  const auto placeholder = std::array<uint8_t, kTokenFileHeaderSize>{};
  buffer_.insert(buffer_.end(), placeholder.begin(), placeholder.end());
}

TokenFileWriter::~TokenFileWriter() {
  if (fd_ >= 0) ::close(fd_);
  std::error_code ec;
  if (flags_fd_ >= 0) {
    ::close(flags_fd_);
    std::filesystem::remove(flags_temp_path_, ec);
  }
  if (!finished_) std::filesystem::remove(temp_path_, ec);
}

void TokenFileWriter::append(uint32_t token) {
  if (header_.token_bytes == 2) {
    const auto t = static_cast<uint16_t>(token);
    const auto* p = reinterpret_cast<const uint8_t*>(&t);
    buffer_.insert(buffer_.end(), p, p + 2);
  } else {
    const auto* p = reinterpret_cast<const uint8_t*>(&token);
    buffer_.insert(buffer_.end(), p, p + 4);
  }
  if (buffer_.size() >= kBufferBytes) flush_buffer();
}

void TokenFileWriter::append_flags(uint8_t flags) {
  flags_buffer_.push_back(flags);
  if (flags_buffer_.size() >= kBufferBytes) flush_flags_buffer();
}

void TokenFileWriter::flush_buffer() {
  write_all(fd_, buffer_.data(), buffer_.size(), temp_path_.string());
  buffer_.clear();
}

void TokenFileWriter::flush_flags_buffer() {
  write_all(flags_fd_, flags_buffer_.data(), flags_buffer_.size(), flags_temp_path_.string());
  flags_buffer_.clear();
}

void TokenFileWriter::check_vocab(std::span<const uint32_t> tokens) const {
  if (finished_) throw TokenFileError(str(path_.string(), ": write_document after finish"));
  for (size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i] >= header_.vocab_size)
      throw TokenFileError(str(path_.string(), ": document ", header_.num_documents, " token ", i,
                               " is ", tokens[i], ", not below vocab_size ", header_.vocab_size));
}

void TokenFileWriter::write_document(std::span<const uint32_t> tokens,
                                     std::span<const uint8_t> counts) {
  if (!header_.has_flags())
    throw TokenFileError(str(path_.string(), ": a loss mask needs a version 2 file (with_flags)"));
  if (counts.size() != tokens.size())
    throw TokenFileError(str(path_.string(), ": document ", header_.num_documents, " has ",
                             tokens.size(), " tokens but ", counts.size(), " mask entries"));
  check_vocab(tokens);
  if (tokens.empty() && !header_.eos_id) return;
  for (size_t i = 0; i < tokens.size(); ++i) {
    append(tokens[i]);
    const bool target = i > 0 && counts[i];
    append_flags(i == 0 ? kTokenStartsDocument : (target ? kTokenCountsAsTarget : 0));
    target_tokens_ += target;
  }
  header_.num_tokens += tokens.size();
  if (header_.eos_id) {
    append(*header_.eos_id);
    const bool last_counts = !tokens.empty() && counts.back() && tokens.size() > 1;
    append_flags(tokens.empty() ? kTokenStartsDocument : (last_counts ? kTokenCountsAsTarget : 0));
    target_tokens_ += last_counts;
    ++header_.num_tokens;
  }
  ++header_.num_documents;
}

void TokenFileWriter::write_document(std::span<const uint32_t> tokens) {
  if (header_.has_flags())
    throw TokenFileError(str(path_.string(), ": a version 2 file needs each document's loss mask"));
  check_vocab(tokens);
  for (size_t i = 0; i < tokens.size(); ++i)
    append(tokens[i]);
  header_.num_tokens += tokens.size();
  if (header_.eos_id) {
    append(*header_.eos_id);
    ++header_.num_tokens;
  }
  ++header_.num_documents;
}

// Copies the flags' temporary file after the tokens.
void TokenFileWriter::append_flags_section() {
  flush_flags_buffer();
  if (::lseek(flags_fd_, 0, SEEK_SET) != 0)
    throw TokenFileError(str(flags_temp_path_.string(), ": cannot seek: ", std::strerror(errno)));
  std::vector<uint8_t> block(kBufferBytes);
  for (;;) {
    const ssize_t r = ::read(flags_fd_, block.data(), block.size());
    if (r < 0) {
      if (errno == EINTR) continue;
      throw TokenFileError(str(flags_temp_path_.string(), ": cannot read: ", std::strerror(errno)));
    }
    if (r == 0) break;
    write_all(fd_, block.data(), static_cast<size_t>(r), temp_path_.string());
  }
}

const TokenFileHeader& TokenFileWriter::finish() {
  if (finished_) return header_;
  flush_buffer();
  if (header_.has_flags()) {
    header_.flags_offset = header_.header_size + header_.num_tokens * header_.token_bytes;
    append_flags_section();
  }
  const auto head = encode_token_file_header(header_);
  const std::string temp = temp_path_.string();
  if (::pwrite(fd_, head.data(), head.size(), 0) != static_cast<ssize_t>(head.size()))
    throw TokenFileError(str(temp, ": cannot write the header: ", std::strerror(errno)));
  if (::fsync(fd_) != 0) throw TokenFileError(str(temp, ": fsync failed: ", std::strerror(errno)));
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) throw TokenFileError(str(temp, ": close failed: ", std::strerror(errno)));
  std::error_code ec;
  std::filesystem::rename(temp_path_, path_, ec);
  if (ec)
    throw TokenFileError(
        str(path_.string(), ": cannot move ", temp, " into place: ", ec.message()));
  finished_ = true;
  sync_directory(path_.parent_path());
  return header_;
}

}  // namespace zt::data
