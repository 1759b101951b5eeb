#include "zerotrain/core/caching_allocator.h"

#include <algorithm>

#include "zerotrain/core/error.h"

namespace zt {

namespace {
constexpr size_t kSmallRound = 512;
constexpr size_t kLargeThreshold = 1u << 20;  // 1 MiB
constexpr size_t kLargeRound = 2u << 20;      // 2 MiB
}  // namespace

CachingAllocator::CachingAllocator(Device device, BlockSource source)
    : device_(device), source_(std::move(source)) {}

CachingAllocator::~CachingAllocator() {
  // Live blocks are leaked on purpose: tensors may outlive the allocator at process exit.
  std::lock_guard lock(mu_);
  empty_cache_locked();
}

size_t CachingAllocator::round_size(size_t n) {
  if (n < kLargeThreshold)
    return std::max(kSmallRound, (n + kSmallRound - 1) / kSmallRound * kSmallRound);
  return (n + kLargeRound - 1) / kLargeRound * kLargeRound;
}

void* CachingAllocator::allocate(size_t nbytes, Stream stream) {
  if (nbytes == 0) return nullptr;
  const size_t rounded = round_size(nbytes);
  std::lock_guard lock(mu_);
  void* p = nullptr;
  auto it = cache_.find({stream.handle, rounded});
  if (it != cache_.end()) {
    p = it->second;
    cache_.erase(it);
    ++stats_.num_cache_hits;
  } else {
    p = allocate_from_source(rounded, nbytes);
  }
  live_[p] = rounded;
  ++stats_.num_allocs;
  stats_.allocated += rounded;
  stats_.peak_allocated = std::max(stats_.peak_allocated, stats_.allocated);
  return p;
}

void* CachingAllocator::allocate_from_source(size_t rounded, size_t asked) {
  auto fits_cap = [&] { return stats_.cap == 0 || stats_.reserved + rounded <= stats_.cap; };
  void* p = fits_cap() ? source_.allocate(rounded) : nullptr;
  if (!p) {
    empty_cache_locked();
    p = fits_cap() ? source_.allocate(rounded) : nullptr;
  }
  if (!p) {
    std::string msg =
        str("out of memory on ", to_string(device_), ": asked ", format_bytes(asked), ", in use ",
            format_bytes(stats_.allocated), " (reserved ", format_bytes(stats_.reserved), ")");
    if (stats_.cap)
      msg +=
          str(", cap ", format_bytes(stats_.cap), " (free under it ",
              format_bytes(stats_.cap > stats_.reserved ? stats_.cap - stats_.reserved : 0), ")");
    if (source_.free_bytes) msg += str(", device free ", format_bytes(source_.free_bytes()));
    throw OutOfMemoryError("alloc", msg);
  }
  ++stats_.num_source_allocs;
  stats_.reserved += rounded;
  stats_.peak_reserved = std::max(stats_.peak_reserved, stats_.reserved);
  return p;
}

void CachingAllocator::deallocate(void* p, size_t /*nbytes*/, Stream stream) {
  if (!p) return;
  std::lock_guard lock(mu_);
  auto it = live_.find(p);
  ZT_ASSERT(it != live_.end(), "alloc", "freeing a block this allocator does not own");
  const size_t rounded = it->second;
  live_.erase(it);
  stats_.allocated -= rounded;
  cache_.insert({{stream.handle, rounded}, p});
}

void CachingAllocator::empty_cache_locked() {
  for (auto& [key, p] : cache_) {
    source_.release(p);
    stats_.reserved -= key.second;
  }
  cache_.clear();
}

void CachingAllocator::empty_cache() {
  std::lock_guard lock(mu_);
  empty_cache_locked();
}

void CachingAllocator::set_cap(size_t bytes) {
  std::lock_guard lock(mu_);
  stats_.cap = bytes;
  if (bytes && stats_.reserved > bytes) empty_cache_locked();
}

AllocatorStats CachingAllocator::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

void CachingAllocator::reset_peak() {
  std::lock_guard lock(mu_);
  stats_.peak_allocated = stats_.allocated;
  stats_.peak_reserved = stats_.reserved;
}

}  // namespace zt
