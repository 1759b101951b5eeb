// Optimizer state in swap files on an NVMe path (ZeRO-Infinity's offload_optimizer device nvme):
// the host optimizer's state is cut into sub-groups (shard_optimizer.h), each a list of flat
// tensors; between steps every sub-group lives in one swap file of this rank, and only
// buffer_count sub-groups are in host memory at once, in 4096-aligned staging buffers. Reads of
// the next sub-groups are issued before the current one is stepped, so they overlap its update,
// and each sub-group is written back asynchronously. The swap directory is this rank's own
// (io/swap_directory.h: removed at exit, on SIGTERM/SIGINT and on error). Tested by
// tests/zero/test_state_swap.cpp and tests/mpi/test_zero_parity.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "zerotrain/config/aio_config.h"
#include "zerotrain/core/tensor.h"
#include "zerotrain/io/aligned_host_buffer.h"
#include "zerotrain/io/swap_directory.h"
#include "zerotrain/io/swap_file.h"

namespace zt::zero {

class StateSwap {
 public:
  // One flat state tensor of a sub-group.
  struct Slot {
    int64_t numel = 0;
    DType dtype = DType::f32;
  };
  // layout[s]: sub-group s's tensors in order. Creates the swap directory under nvme_path (one
  // line naming the path and the bytes needed when it cannot: io::SwapDirectory::create) and the
  // swap file. buffer_count >= 1 staging buffers, each holding the largest sub-group.
  StateSwap(const std::string& nvme_path, std::vector<std::vector<Slot>> layout,
            int64_t buffer_count, const config::AioConfig& aio);
  ~StateSwap();
  StateSwap(const StateSwap&) = delete;
  StateSwap& operator=(const StateSwap&) = delete;

  size_t sub_groups() const { return layout_.size(); }
  size_t buffers() const { return buffers_.size(); }
  // Starts reading sub-group s into its staging buffer (after that buffer's last write-back).
  void prefetch(size_t s);
  // Sub-group s's tensors, viewing its staging buffer once its read is done (prefetching first
  // when it was not). Valid until write_back(s), which the caller calls once done with them.
  std::vector<Tensor> load(size_t s);
  // The first store of sub-group s (its fresh or loaded state, any host tensors), synchronous.
  void store(size_t s, const std::vector<Tensor>& tensors);
  // Starts writing sub-group s's staging buffer back to the file; the buffer is reused after.
  void write_back(size_t s);
  // Waits for every write-back (a step's end): the file holds every sub-group. Rethrows an I/O
  // error (a full disk: one line naming the file).
  void finish();

  int64_t file_bytes() const;    // on the NVMe path
  int64_t buffer_bytes() const;  // staging buffers in host memory
  const std::string& path() const { return path_; }

 private:
  struct Buffer;
  Buffer& buffer_of(size_t s);

  std::vector<std::vector<Slot>> layout_;
  std::vector<int64_t> offset_, bytes_;  // per sub-group: its region of the file (4096-aligned)
  std::unique_ptr<io::SwapDirectory> dir_;
  std::unique_ptr<io::SwapFile> file_;
  std::vector<std::unique_ptr<Buffer>> buffers_;
  std::string path_;
};

}  // namespace zt::zero
