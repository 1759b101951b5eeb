// AlignedHostBuffer: 4096-aligned host memory for swap I/O; the O_DIRECT refusal warning. See
// aligned_host_buffer.h.
#include "zerotrain/io/aligned_host_buffer.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "zerotrain/core/allocator.h"
#include "zerotrain/core/error.h"

namespace zt::io {

AlignedHostBuffer::AlignedHostBuffer(int64_t bytes) : bytes_(bytes) {
  if (bytes < 0) throw ValueError("offload", str("aligned host buffer of ", bytes, " bytes"));
  if (bytes == 0) return;
  const auto rounded = static_cast<size_t>(swap_aligned(bytes));
  data_ = static_cast<std::byte*>(std::aligned_alloc(static_cast<size_t>(kSwapAlignment), rounded));
  if (!data_)
    throw OutOfMemoryError("offload", str("cannot allocate ", format_bytes(rounded),
                                          " of aligned host memory for swap I/O"));
  std::memset(data_, 0, rounded);
}

AlignedHostBuffer::~AlignedHostBuffer() {
  std::free(data_);
}

AlignedHostBuffer::AlignedHostBuffer(AlignedHostBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

AlignedHostBuffer& AlignedHostBuffer::operator=(AlignedHostBuffer&& other) noexcept {
  if (this != &other) {
    std::free(data_);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void warn_direct_io_refused(std::string_view component, const std::filesystem::path& dir, int error,
                            std::string_view consequence) {
  static std::mutex mu;
  static std::set<std::string> warned;
  std::lock_guard<std::mutex> lock(mu);
  if (!warned.insert(str(component, " ", dir.string())).second) return;
  std::fprintf(stderr, "[%.*s] warning: the filesystem of %s refuses O_DIRECT (%s; tmpfs does): %.*s\n",
               static_cast<int>(component.size()), component.data(), dir.string().c_str(),
               std::strerror(error), static_cast<int>(consequence.size()), consequence.data());
}

}  // namespace zt::io
