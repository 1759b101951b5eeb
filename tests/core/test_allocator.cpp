// The caching allocator's policy, tested over a host-memory source: reuse, stats, the cap and its
// out-of-memory message. The same code backs the CUDA allocator (tested on a GPU below).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#if ZT_WITH_CUDA
#include <cuda_runtime.h>
#endif

#include "io/io_test_util.h"
#include "support/test_util.h"
#include "zerotrain/core/caching_allocator.h"
#include "zerotrain/core/tensor.h"

namespace zt {
namespace {

struct CountingSource {
  size_t live = 0, calls = 0;
  size_t limit = SIZE_MAX;  // pretend device size
  BlockSource make() {
    return {[this](size_t n) -> void* {
              ++calls;
              if (live + n > limit) return nullptr;
              live += n;
              return std::malloc(n);
            },
            [this](void* p) { std::free(p); }, [this] { return limit - live; }};
  }
};

TEST(CachingAllocator, ReusesFreedBlocksPerStream) {
  CountingSource src;
  CachingAllocator a(Device::cuda(0), src.make());
  void* p = a.allocate(1000, {});
  a.deallocate(p, 1000, {});
  void* q = a.allocate(900, {});  // same 1024-byte class
  EXPECT_EQ(p, q);
  EXPECT_EQ(src.calls, 1u);
  Stream other{Device::cuda(0), reinterpret_cast<void*>(0x1)};
  a.deallocate(q, 900, {});
  void* r = a.allocate(900, other);  // a different stream never takes it
  EXPECT_NE(r, q);
  auto s = a.stats();
  EXPECT_EQ(s.allocated, 1024u);
  EXPECT_EQ(s.reserved, 2048u);
  EXPECT_EQ(s.num_cache_hits, 1u);
  EXPECT_EQ(s.num_source_allocs, 2u);
  a.deallocate(r, 900, other);
}

TEST(CachingAllocator, RoundsSmallAndLarge) {
  EXPECT_EQ(CachingAllocator::round_size(1), 512u);
  EXPECT_EQ(CachingAllocator::round_size(513), 1024u);
  EXPECT_EQ(CachingAllocator::round_size((1u << 20) + 1), 2u << 20);
  EXPECT_EQ(CachingAllocator::round_size(5u << 20), 6u << 20);
}

TEST(CachingAllocator, PeakTracksHighWaterMark) {
  CountingSource src;
  CachingAllocator a(Device::cuda(0), src.make());
  void* p = a.allocate(4u << 20, {});
  void* q = a.allocate(2u << 20, {});
  a.deallocate(p, 4u << 20, {});
  EXPECT_EQ(a.stats().peak_allocated, 6u << 20);
  EXPECT_EQ(a.stats().allocated, 2u << 20);
  a.reset_peak();
  EXPECT_EQ(a.stats().peak_allocated, 2u << 20);
  a.deallocate(q, 2u << 20, {});
}

TEST(CachingAllocator, CapFailsLikeASmallerDeviceAndSaysWhy) {
  CountingSource src;
  CachingAllocator a(Device::cuda(0), src.make());
  a.set_cap(10u << 20);
  void* p = a.allocate(6u << 20, {});
  void* cached = a.allocate(2u << 20, {});
  a.deallocate(cached, 2u << 20, {});
  // 6 MiB in use + 2 MiB cached: a 4 MiB request fits only after the cache is emptied.
  void* q = a.allocate(4u << 20, {});
  EXPECT_EQ(a.stats().reserved, 10u << 20);
  try {
    a.allocate(1, {});
    FAIL() << "expected OutOfMemoryError";
  } catch (const OutOfMemoryError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("[alloc] out of memory on cuda:0: asked 1 B, in use 10.0 MiB"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("cap 10.0 MiB"), std::string::npos) << msg;
  }
  a.deallocate(p, 6u << 20, {});
  a.deallocate(q, 4u << 20, {});
}

TEST(CachingAllocator, SourceRefusalIsOutOfMemory) {
  CountingSource src;
  src.limit = 3u << 20;
  CachingAllocator a(Device::cuda(0), src.make());
  void* p = a.allocate(2u << 20, {});
  EXPECT_THROW(a.allocate(2u << 20, {}), OutOfMemoryError);
  a.deallocate(p, 2u << 20, {});
}

TEST(CudaAllocator, CapOnRealDevice) {
  ZT_SKIP_WITHOUT_CUDA();
  set_cuda_memory_cap(0, 64u << 20);
  Tensor a = Tensor::empty({32 << 20}, DType::u8, Device::cuda(0));
  EXPECT_THROW(Tensor::empty({48 << 20}, DType::u8, Device::cuda(0)), OutOfMemoryError);
  EXPECT_GE(cuda_allocator(0).stats().peak_allocated, 32u << 20);
  set_cuda_memory_cap(0, 0);
  Tensor b = Tensor::empty({48 << 20}, DType::u8, Device::cuda(0));
  EXPECT_TRUE(b.defined());
}

// --host-memory-cap counts page-locked memory with ordinary host memory (core/host_cap.h): a
// pinned buffer leaves less under the cap for the CPU allocator and the other way round, and the
// refusal is the CPU allocator's "out of memory on cpu" line.
TEST(PinnedAllocator, HostCapCountsPageLockedMemory) {
  ZT_SKIP_WITHOUT_CUDA();
  const size_t base = cpu_allocator().stats().allocated;
  set_cpu_memory_cap(base + (64u << 20));
  {
    Tensor pinned = Tensor::empty({48 << 20}, DType::u8, pinned_host_allocator());
    test::expect_error<OutOfMemoryError>([] { Tensor::empty({32 << 20}, DType::u8); },
                                         {"out of memory on cpu: asked 32.0 MiB"});
    Tensor ordinary = Tensor::empty({8 << 20}, DType::u8);
    test::expect_error<OutOfMemoryError>(
        [] { Tensor::empty({16 << 20}, DType::u8, pinned_host_allocator()); },
        {"out of memory on cpu: asked 16.0 MiB page-locked"});
  }
  Tensor again = Tensor::empty({48 << 20}, DType::u8, pinned_host_allocator());  // released
  EXPECT_TRUE(again.defined());
  set_cpu_memory_cap(0);
}

TEST(PinnedAllocator, AllocatesHostMemory) {
  ZT_SKIP_WITHOUT_CUDA();
  Tensor t = Tensor::empty({1024}, DType::f32, pinned_host_allocator());
  EXPECT_TRUE(t.device().is_cpu());
  t.fill(1.0);
  EXPECT_EQ(t.to_floats()[1023], 1.0f);
}

#if ZT_WITH_CUDA
// A block past the size cudaHostAlloc serves is a registered mapping ([Note: page-locked
// mappings]): still page-locked host memory that one device copy fills end to end.
TEST(PinnedAllocator, LargeBlocksAreRegisteredMappings) {
  ZT_SKIP_WITHOUT_CUDA();
  const int64_t n = int64_t{80} << 20;  // past the mapping threshold (2 MiB)
  Tensor host = Tensor::empty({n}, DType::u8, pinned_host_allocator());
  cudaPointerAttributes attributes{};
  ASSERT_EQ(cudaPointerGetAttributes(&attributes, host.data()), cudaSuccess);
  EXPECT_EQ(attributes.type, cudaMemoryTypeHost);
  Tensor device = Tensor::empty({n}, DType::u8, Device::cuda(0));
  zero_bytes(device.data(), device.device(), static_cast<size_t>(n), Stream{});
  std::memset(host.data(), 7, static_cast<size_t>(n));
  host.copy_from(device);
  synchronize_device(Device::cuda(0));
  const auto* bytes = static_cast<const uint8_t*>(host.data());
  EXPECT_EQ(bytes[0], 0);
  EXPECT_EQ(bytes[n / 2], 0);
  EXPECT_EQ(bytes[n - 1], 0);
}
#endif

}  // namespace
}  // namespace zt
