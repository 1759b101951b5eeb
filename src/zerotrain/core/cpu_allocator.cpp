// Host allocator (64-byte aligned, with statistics, under the host cap of host_cap.h; large blocks
// mapped zeroed, [Note: zeroed host mappings]) and the default-allocator lookup.
#include <sys/mman.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <new>

#include "zerotrain/core/allocator.h"
#include "zerotrain/core/error.h"
#include "zerotrain/core/host_cap.h"

namespace zt {

std::string format_bytes(size_t b) {
  char buf[32];
  const double x = static_cast<double>(b);
  if (b < 1024)
    std::snprintf(buf, sizeof buf, "%zu B", b);
  else if (b < (1u << 20))
    std::snprintf(buf, sizeof buf, "%.1f KiB", x / 1024.0);
  else if (b < (1u << 30))
    std::snprintf(buf, sizeof buf, "%.1f MiB", x / (1u << 20));
  else
    std::snprintf(buf, sizeof buf, "%.2f GiB", x / (1u << 30));
  return buf;
}

namespace {

std::atomic<size_t> g_pinned_bytes{0};  // page-locked bytes in use (host_cap.h)

// The line of a refusal under the cap: ordinary and page-locked bytes count alike.
[[noreturn]] void over_cap(size_t asked, const char* kind, size_t used, size_t cap) {
  throw OutOfMemoryError(
      "alloc", str("out of memory on cpu: asked ", format_bytes(asked), kind, ", in use ",
                   format_bytes(used), ", cap ", format_bytes(cap), " (free under it ",
                   format_bytes(cap > used ? cap - used : 0), ")"));
}

// [Note: zeroed host mappings]
// Blocks of 32 MiB and more are anonymous mappings of their own, as glibc's malloc makes them past
// its largest mmap threshold anyway: the kernel hands them out zeroed and backs each page at its
// first touch. So a large Tensor::zeros costs nothing until used, and a model's gradients and
// optimizer moments are not written once with zeros on one thread at start-up only to be written
// again by the first step.
constexpr size_t kMappedBytes = size_t{32} << 20;

void* map_zeroed(size_t n) {
  void* p = ::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

class CpuAllocator final : public Allocator {
 public:
  void* allocate(size_t n, Stream) override {
    if (n == 0) return nullptr;
    const size_t rounded = (n + 63) / 64 * 64;
    const size_t now = allocated_.fetch_add(rounded) + rounded;
    const size_t cap = cap_.load();
    const size_t pinned = g_pinned_bytes.load();
    if (cap && now + pinned > cap) {
      allocated_ -= rounded;
      over_cap(n, "", now - rounded + pinned, cap);
    }
    void* p = rounded >= kMappedBytes ? map_zeroed(rounded) : std::aligned_alloc(64, rounded);
    if (!p) {
      allocated_ -= rounded;
      throw OutOfMemoryError("alloc", str("out of host memory: asked ", format_bytes(n),
                                          ", in use ", format_bytes(now - rounded)));
    }
    size_t peak = peak_.load();
    while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
    }
    ++num_allocs_;
    return p;
  }
  void deallocate(void* p, size_t n, Stream) override {
    if (!p) return;
    const size_t rounded = (n + 63) / 64 * 64;
    allocated_ -= rounded;
    if (rounded >= kMappedBytes)
      ::munmap(p, rounded);
    else
      std::free(p);
  }
  Device device() const override { return Device::cpu(); }
  bool allocates_zeroed(size_t n) const override { return (n + 63) / 64 * 64 >= kMappedBytes; }
  AllocatorStats stats() const override {
    AllocatorStats s;
    s.allocated = s.reserved = allocated_.load();
    s.peak_allocated = s.peak_reserved = peak_.load();
    s.num_allocs = s.num_source_allocs = num_allocs_.load();
    s.cap = cap_.load();
    return s;
  }
  void reset_peak() override { peak_ = allocated_.load(); }
  void set_cap(size_t bytes) { cap_ = bytes; }
  size_t cap() const { return cap_.load(); }
  size_t in_use() const { return allocated_.load(); }

 private:
  std::atomic<size_t> allocated_{0}, peak_{0}, num_allocs_{0}, cap_{0};
};

CpuAllocator& the_cpu_allocator() {
  static CpuAllocator a;
  return a;
}

}  // namespace

namespace detail {

void charge_pinned_bytes(size_t n) {
  const size_t now = g_pinned_bytes.fetch_add(n) + n;
  const size_t cap = the_cpu_allocator().cap();
  const size_t ordinary = the_cpu_allocator().in_use();
  if (cap && now + ordinary > cap) {
    g_pinned_bytes -= n;
    over_cap(n, " page-locked", now - n + ordinary, cap);
  }
}

void release_pinned_bytes(size_t n) {
  g_pinned_bytes -= n;
}

}  // namespace detail

Allocator& cpu_allocator() {
  return the_cpu_allocator();
}

void set_cpu_memory_cap(size_t bytes) {
  the_cpu_allocator().set_cap(bytes);
}

Allocator& default_allocator(Device d) {
  return d.is_cpu() ? cpu_allocator() : cuda_allocator(d.index);
}

}  // namespace zt
