// The host-memory cap (set_cpu_memory_cap, --host-memory-cap) counts page-locked memory too: the
// CPU allocator and the pinned allocator (cuda/runtime.cpp) share it, so a run with offload's
// pinned buffers rehearses a smaller host as a CPU run does. Internal to core/. Tested by
// tests/core/test_allocator.cpp.
#pragma once

#include <cstddef>

namespace zt::detail {

// Counts n page-locked bytes against the cap: throws OutOfMemoryError "out of memory on cpu: ..."
// (the CPU allocator's line) when ordinary plus page-locked bytes would pass it.
void charge_pinned_bytes(size_t n);
void release_pinned_bytes(size_t n);

}  // namespace zt::detail
