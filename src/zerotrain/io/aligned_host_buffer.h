// Host memory aligned for O_DIRECT swap I/O (io/swap_file.h): kSwapAlignment = 4096 bytes, the page
// size and the largest logical block size of the disks in use, so a request whose pointer, file
// offset and length are multiples of it goes straight to the disk without a bounce copy. The
// engine's pinned staging memory (core/allocator.h pinned_host_allocator, cudaHostAlloc) is
// page-aligned already; this is for host buffers that are not pinned. Also the one warning printed
// where a filesystem refuses O_DIRECT (swap files and checkpoint reads share it). Tested by
// tests/io/test_swap_file.cpp and tests/io/test_direct_file_reader.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string_view>

namespace zt::io {

inline constexpr int64_t kSwapAlignment = 4096;

inline bool is_swap_aligned(int64_t value) {
  return value % kSwapAlignment == 0;
}
inline bool is_swap_aligned(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % static_cast<uintptr_t>(kSwapAlignment) == 0;
}
// `bytes` rounded up to whole kSwapAlignment blocks.
inline int64_t swap_aligned(int64_t bytes) {
  return (bytes + kSwapAlignment - 1) / kSwapAlignment * kSwapAlignment;
}

// `bytes` rounded up to whole 4096-byte blocks, zero-filled; move-only.
class AlignedHostBuffer {
 public:
  AlignedHostBuffer() = default;
  explicit AlignedHostBuffer(int64_t bytes);  // throws ValueError (< 0), OutOfMemoryError
  ~AlignedHostBuffer();
  AlignedHostBuffer(AlignedHostBuffer&& other) noexcept;
  AlignedHostBuffer& operator=(AlignedHostBuffer&& other) noexcept;
  AlignedHostBuffer(const AlignedHostBuffer&) = delete;
  AlignedHostBuffer& operator=(const AlignedHostBuffer&) = delete;

  std::byte* data() const { return data_; }
  int64_t bytes() const { return bytes_; }  // as asked, not rounded

 private:
  std::byte* data_ = nullptr;
  int64_t bytes_ = 0;
};

// Prints "[<component>] warning: the filesystem of <dir> refuses O_DIRECT (<strerror(error)>; tmpfs
// does): <consequence>" to stderr, once per component and directory.
void warn_direct_io_refused(std::string_view component, const std::filesystem::path& dir, int error,
                            std::string_view consequence);

}  // namespace zt::io
