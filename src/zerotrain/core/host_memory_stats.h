// What this process holds in host memory now: its resident set (/proc/self/statm), the peak of it
// (getrusage) and glibc malloc's own statistics (mallinfo2, summed over every arena). The training
// loop logs them at each logged step (train/step_measures.h -> monitor::StepMetrics), and the soak
// of tests/faults/soak.py reads them back to tell a flat run from a leaking one.
// Tested by tests/core/test_host_memory_stats.cpp.
#pragma once

#include <cstdint>

namespace zt {

struct HostMemoryStats {
  int64_t rss_bytes = 0;       // resident now (statm's resident pages); 0 where /proc is missing
  int64_t peak_rss_bytes = 0;  // high-water mark of the resident set (ru_maxrss, >= rss_bytes)
  // malloc's heap; known only with glibc's allocator (not under a sanitizer's, which replaces it).
  bool heap_known = false;
  int64_t heap_in_use_bytes = 0;  // handed out by malloc: small blocks + mmapped blocks
  int64_t heap_arena_bytes = 0;   // obtained for the arenas (sbrk and arena mappings)
  int64_t heap_mmap_bytes = 0;    // held in blocks mmapped one per allocation
  int64_t heap_free_bytes = 0;    // free inside the arenas (fragmentation and cached blocks)
};

// Reads the figures now (a few microseconds: one small file read and a walk over malloc's arenas).
HostMemoryStats read_host_memory_stats();

}  // namespace zt
