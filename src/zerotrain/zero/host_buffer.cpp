// Host buffers for offload; see host_buffer.h.
#include "zerotrain/zero/host_buffer.h"

#include <atomic>
#include <cstdio>
#include <mutex>
#include <set>

#include "zerotrain/core/allocator.h"
#include "zerotrain/core/error.h"

namespace zt::zero {

namespace {
std::atomic<bool> refuse_pinned{false};
}  // namespace

void refuse_pinned_memory_for_tests(bool refuse) {
  refuse_pinned = refuse;
}

Tensor host_buffer(int64_t n, DType dtype, const std::string& pin_key) {
  if (!pin_key.empty() && cuda_available()) {
    try {
      if (refuse_pinned)
        throw OutOfMemoryError("alloc", "pinned host allocation refused (a test's refusal)");
      return Tensor::empty({n}, dtype, pinned_host_allocator());
    } catch (const OutOfMemoryError& e) {
      static std::mutex mu;
      static std::set<std::string> said;
      std::lock_guard lock(mu);
      if (said.insert(pin_key).second)
        std::fprintf(stderr,
                     "[memory] warning: page-locked host memory refused (%s); %s falls back to "
                     "pageable memory, whose copies to the GPU are slower and do not overlap\n",
                     e.what(), pin_key.c_str());
    }
  }
  return Tensor::empty({n}, dtype, Device::cpu());
}

}  // namespace zt::zero
