// The page-locked host allocator (core/allocator.h: pinned_host_allocator): small blocks from
// cudaHostAlloc, large ones as registered mappings ([Note: page-locked mappings]).
// Tested by tests/core/test_allocator.cpp (PinnedAllocator).
#include <omp.h>
#include <sys/mman.h>

#include <algorithm>
#include <mutex>

#include "zerotrain/core/allocator.h"
#include "zerotrain/core/cuda/cuda_check.h"
#include "zerotrain/core/host_cap.h"

namespace zt {

namespace {

// [Note: page-locked mappings]
// cudaHostAlloc faults, zeroes and pins every page while it holds the CUDA driver's lock, so a
// training loop on another thread cannot launch or copy until it returns. Measured on an H100
// host (bench/pinning_bench.cpp, bench/results/pinning_h100.json), 16 GiB took 10.3 s and stalled
// such a loop for all of it: the checkpoint buffers made at start (checkpoint_saver.h) cost the
// first steps of a 1B run about 10 s. A large block is therefore an anonymous mapping advised to
// transparent huge pages, faulted in by half the host cores without any CUDA call (the loop runs
// on), then registered whole with cudaHostRegister, the one call under the lock: 1.2 s in all for
// 16 GiB, of which the loop waited 0.38 s; device-to-host copies into it run at the same 55 GB/s.
// Whole, because one copy may not span two registrations. From 2 MiB up: a 1B model's shard has
// hundreds of pieces of 4-64 MiB (4.2 GB in all), and made by cudaHostAlloc they still held the
// loop up for about 2 s in all.
constexpr size_t kMappedBytes = size_t{2} << 20;
constexpr size_t kPageBytes = 4096;

// nullptr (and why in `error`) when the mapping or the registration is refused.
void* map_page_locked(size_t n, cudaError_t& error) {
  void* p = ::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    error = cudaErrorMemoryAllocation;
    return nullptr;
  }
  ::madvise(p, n, MADV_HUGEPAGE);  // advice only: without transparent huge pages it still works
  auto* bytes = static_cast<volatile unsigned char*>(p);
  const auto pages = static_cast<ptrdiff_t>((n + kPageBytes - 1) / kPageBytes);
  // Half the cores: the training thread beside it needs a core to launch on.
  const int threads = std::max(1, omp_get_num_procs() / 2);
#pragma omp parallel for schedule(static) num_threads(threads)
  for (ptrdiff_t i = 0; i < pages; ++i)
    bytes[static_cast<size_t>(i) * kPageBytes] = 0;
  error = cudaHostRegister(p, n, cudaHostRegisterPortable);
  if (error != cudaSuccess) {
    cudaGetLastError();
    ::munmap(p, n);
    return nullptr;
  }
  return p;
}

class PinnedHostAllocator final : public Allocator {
 public:
  void* allocate(size_t n, Stream) override {
    if (n == 0) return nullptr;
    detail::charge_pinned_bytes(n);  // the host cap counts page-locked bytes too
    void* p = nullptr;
    cudaError_t e = cudaSuccess;
    const bool mapped = n >= kMappedBytes;
    const char* how = mapped ? "mmap + cudaHostRegister" : "cudaHostAlloc";
    if (mapped) {
      p = map_page_locked(n, e);
    } else if ((e = cudaHostAlloc(&p, n, cudaHostAllocPortable)) != cudaSuccess) {
      cudaGetLastError();
      p = nullptr;
    }
    if (!p) {
      detail::release_pinned_bytes(n);
      throw OutOfMemoryError("alloc", str("pinned host allocation of ", format_bytes(n), " (", how,
                                          ") failed: ", cudaGetErrorString(e)));
    }
    std::lock_guard lock(mu_);
    stats_.allocated += n;
    stats_.reserved = stats_.allocated;
    stats_.peak_allocated = std::max(stats_.peak_allocated, stats_.allocated);
    stats_.peak_reserved = stats_.peak_allocated;
    ++stats_.num_allocs;
    ++stats_.num_source_allocs;
    return p;
  }
  void deallocate(void* p, size_t n, Stream) override {
    if (!p) return;
    if (n >= kMappedBytes) {
      cudaHostUnregister(p);
      ::munmap(p, n);
    } else {
      cudaFreeHost(p);
    }
    detail::release_pinned_bytes(n);
    std::lock_guard lock(mu_);
    stats_.allocated -= n;
    stats_.reserved = stats_.allocated;
  }
  Device device() const override { return Device::cpu(); }
  AllocatorStats stats() const override {
    std::lock_guard lock(mu_);
    return stats_;
  }

 private:
  mutable std::mutex mu_;
  AllocatorStats stats_;
};

}  // namespace

Allocator& pinned_host_allocator() {
  if (!cuda_available()) throw DeviceError("alloc", "pinned host memory needs a CUDA device");
  static PinnedHostAllocator& a = *new PinnedHostAllocator;  // never destroyed: at exit the CUDA
  return a;                                                   // runtime may already be unloading
}

}  // namespace zt
