// Host memory for what offload keeps on the host ([Note: optimizer offload] in
// shard_optimizer.h, parameter shards in param_group.h) and for a checkpoint's host copies of
// GPU shards (checkpoint/shard_file.h): page-locked when the policy asks for it
// (pin_memory) and a GPU exists, so copies to and from the GPU are fast and asynchronous; ordinary
// memory otherwise. When the OS refuses page-locked memory the buffer falls back to ordinary
// memory and says so once, naming the key. Tested by tests/zero/test_host_buffer.cpp.
#pragma once

#include <cstdint>
#include <string>

#include "zerotrain/core/tensor.h"

namespace zt::zero {

// [n] of `dtype` in host memory. pin_key: the ds_config key that asked for pinning
// ("offload_optimizer.pin_memory") or what the buffer is for (the warning names it), or empty for
// ordinary memory.
Tensor host_buffer(int64_t n, DType dtype, const std::string& pin_key);

// For tests of the fallback: while set, every request for page-locked memory is refused as the OS
// would refuse it (an OutOfMemoryError from the pinned allocator).
void refuse_pinned_memory_for_tests(bool refuse);

}  // namespace zt::zero
