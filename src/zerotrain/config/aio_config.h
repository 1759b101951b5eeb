// DeepSpeed's "aio" section: how swap files on an NVMe path are read and written (block size,
// queue depth, threads, submission and completion habits). Its own header because the swap files
// of the offload engine (io/swap_file.h) take it as the user gave it.
#pragma once

#include <cstdint>
#include <string>

namespace zt::config {

struct AioConfig {
  std::string io_backend = "async_io";  // "async_io" or "posix" (DeepSpeed's aliases accepted)
  int64_t block_size = 1'048'576;       // bytes per request
  int64_t queue_depth = 8;              // requests in flight per thread
  int64_t intra_op_parallelism = 1;     // threads per read or write (DeepSpeed: thread_count)
  bool single_submit = false;           // submit requests one at a time instead of in batches
  bool overlap_events = true;           // submit more while earlier requests complete
  bool use_gds = false;                 // GPUDirect Storage
};

}  // namespace zt::config
