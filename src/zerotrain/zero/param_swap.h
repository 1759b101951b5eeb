// Parameter shards in a swap file on an NVMe path (ZeRO-Infinity's offload_param device nvme,
// stage 3): between uses, each group's value shard lives only in this rank's swap file, and host
// memory holds buffer_count staging buffers. Groups are packed in order into units of at most
// max(buffer_size, the largest shard) elements, each group at a 4096-byte boundary; a unit is read
// whole (one large direct read) into a free buffer, least recently used first, and a buffer is
// reused only after the copies queued from it are done. Gathers pin a shard while they copy it to
// the device ([Note: param group states] in param_group.h); the host optimizer loads and stores
// shards around its update (shard_optimizer.h). Every call is serialized by one lock: gathers run
// on the engine's thread, the host update on the optimizer's worker. A shard is stored only while
// no copy of it is in flight (the optimizer steps a group after its gathers are done), so a store
// may go into a unit another group of which is pinned. A call that needs a buffer while the other
// thread pins every one waits for an unpin; one thread pinning them all is an error. The copies
// from a buffer are queued on one stream (a run gathers on one). Besides the staging buffers, up to
// max_in_cpu elements of units stay in host memory: see [Note: parameter swap cache]. Tested by
// tests/zero/test_param_swap.cpp and tests/mpi/test_zero_parity.cpp.
//
// [Note: parameter swap cache]
// offload_param.max_in_cpu (DeepSpeed: the parameter elements kept in CPU memory when parameters
// are on NVMe) adds cache buffers to the buffer_count staging buffers: as many more buffers of the
// staging size as hold at most max_in_cpu elements (in the widest value dtype), and no more than
// there are units beyond the staging buffers. They are the same kind of buffer in the same pool,
// under the same lock, least recently used first; only their allocation differs: a cache buffer
// is allocated (page-locked with pin_memory) when a unit needs a buffer and every buffer so far
// holds a unit, so a large cache costs no start-up time and a run that touches few units never
// allocates it. With every unit in a buffer, no unit is read twice. Stores write through to the file as they
// always have (into the buffer holding the unit, then the same bytes to the file), so a buffer is
// never newer than the file: evicting a unit writes nothing, and correctness is the staging
// protocol's. max_in_cpu 0 is the staging buffers alone.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "zerotrain/io/swap_directory.h"
#include "zerotrain/io/swap_file.h"
#include "zerotrain/zero/offload_policy.h"
#include "zerotrain/zero/param_group.h"

namespace zt::zero {

class ParamSwap final : public SwappedShards {
 public:
  struct Shard {
    int64_t numel = 0;
    DType dtype = DType::f32;
  };
  // shards[g]: group g's value shard. Creates the swap directory under
  // target.nvme_path (one line naming the path and the bytes needed when it cannot:
  // io::SwapDirectory::create), the swap file and the staging buffers (page-locked with
  // target.pin_memory when a GPU exists). `device`: where the gathers copy to.
  ParamSwap(std::vector<Shard> shards, const ParamOffload& target, const config::AioConfig& aio,
            Device device);
  ~ParamSwap() override;

  Tensor pin(size_t g) override;
  void unpin(size_t g, Stream copies) override;
  void load(size_t g, const Tensor& dst) override;
  void store(size_t g, const Tensor& src, Stream stream) override;

  size_t units() const { return units_.size(); }
  int64_t file_bytes() const;    // on the NVMe path
  int64_t buffer_bytes() const;  // staging buffers in host memory
  // The cache buffers' host memory once all are allocated (max_in_cpu; allocated as units are
  // first read): see [Note: parameter swap cache].
  int64_t cache_bytes() const;
  int64_t bytes_read() const;  // from the swap file so far

 private:
  struct Unit {
    int64_t offset = 0, bytes = 0;  // its region of the file
  };
  struct Buffer;
  // The buffer holding `unit`, read into one when needed; `lock` holds mu_.
  Buffer& resident(size_t unit, std::unique_lock<std::mutex>& lock);
  // While cache buffers remain to be allocated: an unpinned buffer holding no unit, else a new one.
  // Then: the least recently used unpinned one, its copies done; waits while another thread pins
  // them all.
  Buffer& free_buffer(std::unique_lock<std::mutex>& lock);
  Buffer* holding(size_t unit);
  void add_buffer();

  std::vector<Shard> shards_;
  std::vector<size_t> unit_of_;     // per group
  std::vector<int64_t> offset_in_;  // per group: bytes from its unit's start
  std::vector<Unit> units_;
  std::vector<std::unique_ptr<Buffer>> buffers_;  // staging buffers first, then cache buffers
  size_t staging_count_ = 0;
  size_t buffer_limit_ = 0;        // staging and cache buffers
  int64_t buffer_size_bytes_ = 0;  // of each buffer
  std::string pin_key_;            // offload_param.pin_memory, or empty
  Device device_;
  uint64_t clock_ = 0;
  std::mutex mu_;
  std::condition_variable unpinned_;
  std::unique_ptr<io::SwapDirectory> dir_;
  std::unique_ptr<io::SwapFile> file_;
};

}  // namespace zt::zero
