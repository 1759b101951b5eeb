// The threads behind io/swap_file.h: a SwapFile splits each read or write into parts, one queue of
// parts per worker thread (aio.intra_op_parallelism of them); a worker cuts its part into requests
// of aio.block_size bytes and keeps up to aio.queue_depth of them in flight on its own io_uring
// ring, or, with the posix backend, runs them one after the other with pread/pwrite. Internal to
// io/; tested through tests/io/test_swap_file.cpp.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "zerotrain/io/aligned_host_buffer.h"

namespace zt::io::detail {

// What the parts of one request share: how many are left, and the first failure.
class SwapRequestState {
 public:
  // `what`: "write of <n> bytes at offset <o> of <path>", the start of a failure's message;
  // `counter` gains `bytes` when every part is over without error.
  SwapRequestState(int parts, std::string what, std::atomic<int64_t>* counter, int64_t bytes);
  // One part is over; `error` 0 = success, > 0 an errno, -1 a short transfer (`detail` says how
  // much). `offset`: the file offset where it failed.
  void part_finished(int error, int64_t offset, const std::string& detail);
  void wait() const;
  bool done() const;
  // After wait(): "" on success, else the failure's message (without "[offload] ").
  std::string failure() const;
  // Whether wait() already threw this failure (set by the first report).
  bool take_unreported() { return !reported_.exchange(true); }

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  int parts_left_;
  std::string what_;
  std::atomic<int64_t>* counter_;
  int64_t bytes_;
  std::string failure_;
  std::atomic<bool> reported_{false};
};

// Moves `len` bytes at file offset `off` with pread/pwrite, resuming after partial transfers.
// Returns 0, an errno, or -1 when the file ended (`*done` bytes moved). Also used by
// io/direct_file_reader.cpp.
int transfer_all(bool write, int fd, std::byte* buf, int64_t len, int64_t off, int64_t* done);

// One piece of a request for one worker.
struct SwapPart {
  bool write = false;
  int64_t file_offset = 0;
  std::byte* memory = nullptr;
  int64_t bytes = 0;
  // false: a small piece off the 4096-byte grid of an O_DIRECT file, moved with one synchronous
  // pread/pwrite through the buffered descriptor (the page cache merges it with its neighbours).
  bool chunked = true;
  std::shared_ptr<SwapRequestState> request;
};

struct SwapWorkerSettings {
  int direct_fd = -1;    // the O_DIRECT descriptor (the buffered one where O_DIRECT is refused)
  int buffered_fd = -1;  // for the pieces off the 4096-byte grid
  bool direct = false;
  int64_t chunk_bytes = 0;  // aio.block_size, rounded up to 4096 when direct
  int queue_depth = 1;
  bool single_submit = false;
  bool overlap_events = true;
};

class IoRing;  // an io_uring instance (liburing), in swap_io_worker.cpp
struct IoRingDeleter {
  void operator()(IoRing* ring) const;
};
using IoRingPtr = std::unique_ptr<IoRing, IoRingDeleter>;

// An io_uring ring of `entries` entries, or null with `*error` set to the errno of the refusal.
IoRingPtr open_io_ring(int entries, int* error);

class SwapIoWorker {
 public:
  // `ring` null: the posix backend.
  SwapIoWorker(const SwapWorkerSettings& settings, IoRingPtr ring);
  ~SwapIoWorker();  // finishes every queued part, then joins
  SwapIoWorker(const SwapIoWorker&) = delete;
  SwapIoWorker& operator=(const SwapIoWorker&) = delete;

  void push(SwapPart part);

 private:
  struct Failure {
    int error = 0;  // errno, or -1 for a short transfer
    int64_t offset = 0;
    std::string detail;
  };
  void loop();
  Failure run(const SwapPart& part);
  Failure run_chunks_posix(const SwapPart& part);
  Failure run_chunks_uring(const SwapPart& part);
  std::byte* bounce_slots(int slots);

  SwapWorkerSettings settings_;
  IoRingPtr ring_;
  AlignedHostBuffer bounce_;  // queue_depth chunks, for memory off the 4096-byte grid
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<SwapPart> queue_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace zt::io::detail
