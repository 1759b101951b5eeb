// A device-agnostic caching allocator over a backing source (cudaMalloc in production, malloc in
// tests), with statistics and an optional cap.
//
// [Note: caching allocator]
// Requests are rounded up (512 B for small, 2 MiB for large blocks) and freed blocks are kept in a
// cache keyed by (stream, rounded size), so a block is only reused by the stream that last used it:
// work queued on that stream is ordered before any reuse, with no event needed. A request that
// would push `reserved` past the cap, or that the source refuses, first returns every cached block
// to the source and retries once; if it still does not fit, OutOfMemoryError says what was asked,
// what is in use and the cap.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "zerotrain/core/allocator.h"

namespace zt {

struct BlockSource {
  std::function<void*(size_t)> allocate;  // returns nullptr when out of memory
  std::function<void(void*)> release;
  std::function<size_t()>
      free_bytes;  // free memory the source reports (for messages); may be empty
};

class CachingAllocator final : public Allocator {
 public:
  CachingAllocator(Device device, BlockSource source);
  ~CachingAllocator() override;

  void* allocate(size_t nbytes, Stream stream) override;
  void deallocate(void* p, size_t nbytes, Stream stream) override;
  Device device() const override { return device_; }
  AllocatorStats stats() const override;
  void reset_peak() override;

  void set_cap(size_t bytes);
  void empty_cache();  // returns every cached block to the source

  static size_t round_size(size_t nbytes);

 private:
  void* allocate_from_source(size_t rounded, size_t asked);
  void empty_cache_locked();

  Device device_;
  BlockSource source_;
  mutable std::mutex mu_;
  std::multimap<std::pair<void*, size_t>, void*> cache_;  // (stream, rounded size) -> block
  std::unordered_map<void*, size_t> live_;                // block -> rounded size
  AllocatorStats stats_;
};

}  // namespace zt
