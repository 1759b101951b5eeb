// Allocator interface and the process-wide default allocators per device.
// See [Note: caching allocator] in caching_allocator.h for the CUDA policy.
#pragma once

#include <cstddef>
#include <string>

#include "zerotrain/core/device.h"
#include "zerotrain/core/stream.h"

namespace zt {

struct AllocatorStats {
  size_t allocated = 0;       // bytes handed out and not yet freed
  size_t peak_allocated = 0;  // high-water mark of `allocated`
  size_t reserved = 0;        // bytes obtained from the backing source (allocated + cached)
  size_t peak_reserved = 0;
  size_t num_allocs = 0;
  size_t num_cache_hits = 0;     // allocations served from the cache
  size_t num_source_allocs = 0;  // allocations that went to the backing source (cudaMalloc)
  size_t cap = 0;                // 0 = no cap
};

std::string format_bytes(size_t bytes);  // "1.50 GiB", "12.0 MiB", "512 B"

class Allocator {
 public:
  virtual ~Allocator() = default;
  // Returns memory usable on `device()` once work queued on `stream` reaches it. Throws
  // OutOfMemoryError. A zero-byte request returns nullptr.
  virtual void* allocate(size_t nbytes, Stream stream) = 0;
  virtual void deallocate(void* p, size_t nbytes, Stream stream) = 0;
  virtual Device device() const = 0;
  // True when every block of `nbytes` this allocator hands out is already zero (the host
  // allocator's fresh mappings, [Note: zeroed host mappings]): Tensor::zeros then writes nothing,
  // and the pages are first touched by whoever uses them.
  virtual bool allocates_zeroed(size_t nbytes) const { return false; }
  virtual AllocatorStats stats() const { return {}; }
  virtual void reset_peak() {}
};

// Aligned (64 B) host memory.
Allocator& cpu_allocator();
// The caching allocator of CUDA device `index` (throws DeviceError without CUDA).
Allocator& cuda_allocator(int index);
// Page-locked host memory for fast, asynchronous host<->device copies (throws without CUDA).
Allocator& pinned_host_allocator();
// cpu_allocator() or cuda_allocator(d.index).
Allocator& default_allocator(Device d);

// Caps what the CUDA allocator of device `index` may reserve (0 removes the cap), so a smaller
// GPU can be rehearsed on a larger one.
void set_cuda_memory_cap(int index, size_t bytes);
// Caps what cpu_allocator() may hand out at once (0 removes the cap): an allocation that would pass
// it throws OutOfMemoryError, so the out-of-memory path of a CPU run can be rehearsed (and tested).
// Counts the tensors' storage only, not other heap use.
void set_cpu_memory_cap(size_t bytes);

}  // namespace zt
