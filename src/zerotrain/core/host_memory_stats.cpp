// read_host_memory_stats (see host_memory_stats.h).
#include "zerotrain/core/host_memory_stats.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ZT_SANITIZER_MALLOC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define ZT_SANITIZER_MALLOC 1
#endif
#endif

namespace zt {

namespace {

// The second field of /proc/self/statm: resident pages. 0 when unreadable.
int64_t resident_bytes() {
  std::ifstream in("/proc/self/statm");
  long long size_pages = 0, resident_pages = 0;
  if (!(in >> size_pages >> resident_pages)) return 0;
  const long page = ::sysconf(_SC_PAGESIZE);
  return page > 0 ? static_cast<int64_t>(resident_pages) * page : 0;
}

int64_t peak_resident_bytes() {
  rusage usage{};
  if (::getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;  // Linux counts it in KiB
}

}  // namespace

HostMemoryStats read_host_memory_stats() {
  HostMemoryStats s;
  s.rss_bytes = resident_bytes();
  // The kernel updates ru_maxrss's high-water mark lazily (when a mapping shrinks), so it can lag
  // the resident set just read.
  s.peak_rss_bytes = std::max(peak_resident_bytes(), s.rss_bytes);
#if defined(__GLIBC__) && !defined(ZT_SANITIZER_MALLOC) && \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  const struct mallinfo2 m = ::mallinfo2();
  s.heap_known = true;
  s.heap_in_use_bytes = static_cast<int64_t>(m.uordblks + m.hblkhd);
  s.heap_arena_bytes = static_cast<int64_t>(m.arena);
  s.heap_mmap_bytes = static_cast<int64_t>(m.hblkhd);
  s.heap_free_bytes = static_cast<int64_t>(m.fordblks);
#endif
  return s;
}

}  // namespace zt
