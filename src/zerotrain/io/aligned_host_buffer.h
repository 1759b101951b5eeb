// Host memory aligned for O_DIRECT swap I/O (io/swap_file.h): kSwapAlignment = 4096 bytes, the page
// size and the largest logical block size of the disks in use, so a request whose pointer, file
// offset and length are multiples of it goes straight to the disk without a bounce copy. The
// engine's pinned staging memory (core/allocator.h pinned_host_allocator, cudaHostAlloc) is
// page-aligned already; this is for host buffers that are not pinned. Tested by
// tests/io/test_swap_file.cpp.
#pragma once

#include <cstddef>
#include <cstdint>

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

}  // namespace zt::io
