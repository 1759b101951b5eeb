// File primitives for every layer (model files, token files, checkpoints, run outputs, ds_config):
// a read-only memory map, and an atomic file write (a temporary name beside the target, fsync,
// rename, fsync of the directory) so that a failed or interrupted write never leaves a partial file
// under the final name ([Note: atomic writes] in docs/ARCHITECTURE.md). Tested by
// tests/io/test_atomic_write.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace zt {

// A whole file mapped read-only (MAP_PRIVATE). Empty files map to data() == nullptr, size() == 0.
class MappedFile {
 public:
  explicit MappedFile(const std::filesystem::path& path);
  ~MappedFile();
  MappedFile(MappedFile&& o) noexcept;
  MappedFile& operator=(MappedFile&& o) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::byte* data() const { return data_; }
  size_t size() const { return size_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  void release() noexcept;

  std::filesystem::path path_;
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
};

// Writes a file under a temporary name in the target's directory; commit() flushes it to disk and
// renames it over the target. Destroyed without commit() (an exception on the way), it removes the
// temporary file and leaves any earlier file under the target name untouched.
class AtomicFile {
 public:
  explicit AtomicFile(std::filesystem::path target);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, size_t nbytes);
  void write(std::string_view text) { write(text.data(), text.size()); }
  uint64_t bytes_written() const { return written_; }
  void commit();

  const std::filesystem::path& target() const { return target_; }
  const std::filesystem::path& temp_path() const { return temp_; }

 private:
  std::filesystem::path target_;
  std::filesystem::path temp_;
  int fd_ = -1;
  uint64_t written_ = 0;
  bool committed_ = false;
};

// fsyncs a directory, so that renames and creations in it survive a power cut (file systems that
// cannot sync a directory are taken as they are).
void fsync_directory(const std::filesystem::path& dir);

// What `path` is when it exists and is not a regular file ("a FIFO", "a character device", "a
// block device", "a socket", "a directory"), else "" (a regular file, a link to one, or nothing
// there: open() then says why). Readers refuse such a path before opening it: opening a FIFO
// blocks until a writer comes, reading a device may never end.
std::string non_regular_kind(const std::filesystem::path& path);

// open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK): a FIFO put in place after the check above still
// cannot block the open (O_NONBLOCK changes nothing for a regular file). -1 with errno on failure.
int open_read_only(const std::filesystem::path& path);

// Whole-file helpers.
std::string read_text_file(const std::filesystem::path& path, std::string_view component);
void write_file_atomic(const std::filesystem::path& path, std::string_view contents);

}  // namespace zt
