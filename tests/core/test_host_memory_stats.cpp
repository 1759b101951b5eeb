// core/host_memory_stats.h: the resident set and malloc's in-use bytes follow an allocation that is
// touched and then freed (the freeing part only with glibc's malloc: a sanitizer's quarantine keeps
// freed blocks resident), and the peak never falls below the current resident set.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "zerotrain/core/host_memory_stats.h"

namespace zt {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

TEST(HostMemoryStats, ResidentSetFollowsATouchedAllocation) {
  const HostMemoryStats before = read_host_memory_stats();
  ASSERT_GT(before.rss_bytes, 0) << "no /proc/self/statm";
  EXPECT_GE(before.peak_rss_bytes, before.rss_bytes);
  const size_t bytes = 64 * kMiB;
  char* block = static_cast<char*>(std::malloc(bytes));
  ASSERT_NE(block, nullptr);
  std::memset(block, 1, bytes);  // resident only once written
  const HostMemoryStats held = read_host_memory_stats();
  EXPECT_GE(held.rss_bytes - before.rss_bytes, 60 * kMiB);
  EXPECT_GE(held.peak_rss_bytes, held.rss_bytes);
  if (held.heap_known) {
    EXPECT_GE(held.heap_in_use_bytes - before.heap_in_use_bytes, 64 * kMiB);
    EXPECT_GE(held.heap_mmap_bytes - before.heap_mmap_bytes, 64 * kMiB);  // past mmap's threshold
  }
  volatile char sink = block[bytes - 1];
  (void)sink;
  std::free(block);
  const HostMemoryStats after = read_host_memory_stats();
  if (after.heap_known) {  // glibc's malloc unmaps the block at once; a sanitizer's holds it back
    EXPECT_LE(after.rss_bytes, held.rss_bytes - 60 * kMiB);
    EXPECT_LE(after.heap_in_use_bytes, held.heap_in_use_bytes - 64 * kMiB);
  }
}

TEST(HostMemoryStats, HeapInUseCountsSmallBlocks) {
  const HostMemoryStats before = read_host_memory_stats();
  if (!before.heap_known) GTEST_SKIP() << "malloc is not glibc's here (a sanitizer's allocator)";
  std::vector<void*> blocks;
  for (int i = 0; i < 4096; ++i)
    blocks.push_back(std::malloc(1024));  // in the arena, not mmapped
  const HostMemoryStats held = read_host_memory_stats();
  EXPECT_GE(held.heap_in_use_bytes - before.heap_in_use_bytes, 4 * kMiB);
  EXPECT_LE(held.heap_in_use_bytes - before.heap_in_use_bytes, 8 * kMiB);
  EXPECT_EQ(held.heap_mmap_bytes, before.heap_mmap_bytes);
  EXPECT_GE(held.heap_arena_bytes, held.heap_in_use_bytes - held.heap_mmap_bytes);
  for (void* p : blocks)
    std::free(p);
  const HostMemoryStats after = read_host_memory_stats();
  EXPECT_LE(after.heap_in_use_bytes - before.heap_in_use_bytes, kMiB / 4);
}

}  // namespace
}  // namespace zt
