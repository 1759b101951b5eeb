// One fixed-size swap file of NVMe offload in a SwapDirectory, read and written asynchronously
// under DeepSpeed's "aio" settings (config/aio_config.h): each read or write is split over
// intra_op_parallelism threads, each cutting its share into block_size requests with up to
// queue_depth in flight on its own io_uring ring (liburing; io_backend "posix": pread/pwrite in the
// same threads, one request at a time, so queue_depth, single_submit and overlap_events do not
// apply). Each SwapFile owns its threads and rings: keep a few large files (one per kind of state)
// and address pieces by offset, not a file per tensor.
//
// The file is opened with O_DIRECT, so reads come from the disk and not from the page cache; where
// the filesystem refuses O_DIRECT (tmpfs before Linux 6.6) it falls back to buffered I/O with a
// one-time warning naming the directory, and where the kernel or a container refuses io_uring to
// the posix backend with a one-time warning saying so.
//
// Alignment: a transfer whose memory, file offset and length are multiples of kSwapAlignment (4096
// bytes, io/aligned_host_buffer.h) goes straight between the caller's memory and the disk; that is
// the fast case. Any other pointer, offset or length works too: memory off the grid is copied
// through an aligned bounce buffer, and the pieces of the file off the grid (the first and last
// partial 4096-byte block of a transfer) go through the page cache.
//
// Tested by tests/io/test_swap_file.cpp; measured against the disk by bench/nvme_bench.cpp.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "zerotrain/config/aio_config.h"
#include "zerotrain/io/aligned_host_buffer.h"
#include "zerotrain/io/swap_directory.h"

namespace zt::io {

namespace detail {
class SwapRequestState;
}

// A read or write in flight. wait() blocks until it is over and throws IoError "[offload] <write|
// read> of <n> bytes at offset <o> of <file> failed at offset <x>: <reason>" when it failed (a
// disk error, a full disk, a short transfer). The memory it reads from or writes to must stay
// alive and untouched until then; destroying a request waits for it (and prints a failure that
// wait() never reported to stderr, since a destructor cannot throw).
class SwapRequest {
 public:
  SwapRequest() = default;  // an empty request, already done
  ~SwapRequest();
  SwapRequest(SwapRequest&& other) noexcept = default;
  SwapRequest& operator=(SwapRequest&& other) noexcept;  // waits for the request it replaces
  SwapRequest(const SwapRequest&) = delete;
  SwapRequest& operator=(const SwapRequest&) = delete;

  void wait();
  bool done() const;  // without blocking

 private:
  friend class SwapFile;
  explicit SwapRequest(std::shared_ptr<detail::SwapRequestState> state);
  void finish_quietly() noexcept;

  std::shared_ptr<detail::SwapRequestState> state_;
};

class SwapFile {
 public:
  // Creates `name` in `dir` (which must outlive the file) and reserves `bytes` on the disk
  // (fallocate): a disk without room is one IoError naming the file and the bytes. Throws
  // ValueError for AioConfig values it cannot honour (block_size, queue_depth or
  // intra_op_parallelism below 1, an unknown io_backend, use_gds).
  SwapFile(const SwapDirectory& dir, const std::string& name, int64_t bytes,
           const config::AioConfig& aio);
  ~SwapFile();  // waits for every request in flight, then closes and removes the file
  SwapFile(SwapFile&& other) noexcept;
  SwapFile& operator=(SwapFile&& other) noexcept;
  SwapFile(const SwapFile&) = delete;
  SwapFile& operator=(const SwapFile&) = delete;

  // Start at once and return; several may be in flight together from the one thread that uses
  // this object. Requests in flight together run in no set order: a read of bytes that a write in
  // flight is changing reads either. ValueError for a range outside [0, bytes()).
  SwapRequest write(int64_t offset, const void* src, int64_t bytes);
  SwapRequest read(int64_t offset, void* dst, int64_t bytes);

  int64_t bytes() const;
  const std::filesystem::path& path() const;
  int64_t bytes_read() const;     // by the requests that finished without error
  int64_t bytes_written() const;  // likewise
  bool direct() const;            // O_DIRECT; false where the filesystem refused it
  const char* backend() const;    // "io_uring" or "posix": the one in use

 private:
  struct Impl;
  SwapRequest start(bool write, int64_t offset, std::byte* memory, int64_t bytes);

  std::unique_ptr<Impl> impl_;
};

}  // namespace zt::io
