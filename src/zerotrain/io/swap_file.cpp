// SwapFile and SwapRequest: the file, its descriptors, the split of a request into parts for the
// worker threads (io/swap_io_worker.h). See swap_file.h.
#include "zerotrain/io/swap_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <vector>

#include "zerotrain/core/allocator.h"
#include "zerotrain/core/error.h"
#include "zerotrain/core/io_error.h"
#include "zerotrain/io/swap_io_worker.h"

namespace zt::io {
namespace {

int64_t round_up(int64_t v, int64_t to) {
  return (v + to - 1) / to * to;
}
int64_t round_down(int64_t v, int64_t to) {
  return v / to * to;
}

void check_aio(const config::AioConfig& aio) {
  auto at_least_one = [](const char* key, int64_t v) {
    if (v < 1) throw ValueError("offload", str("aio.", key, " ", v, ": must be >= 1"));
  };
  at_least_one("block_size", aio.block_size);
  at_least_one("queue_depth", aio.queue_depth);
  at_least_one("intra_op_parallelism", aio.intra_op_parallelism);
  if (aio.queue_depth > 4096)
    throw ValueError("offload", str("aio.queue_depth ", aio.queue_depth, ": must be <= 4096"));
  if (aio.intra_op_parallelism > 256)
    throw ValueError(
        "offload", str("aio.intra_op_parallelism ", aio.intra_op_parallelism, ": must be <= 256"));
  if (aio.block_size > (int64_t{1} << 30))
    throw ValueError("offload", str("aio.block_size ", aio.block_size, ": must be <= 1 GiB"));
  if (aio.io_backend != "async_io" && aio.io_backend != "posix")
    throw ValueError("offload",
                     str("aio.io_backend \"", aio.io_backend, "\": expected async_io or posix"));
  if (aio.use_gds)
    throw ValueError("offload",
                     "aio.use_gds true: GPUDirect Storage is not supported by zerotrain");
}

void warn_no_io_uring(int error, int64_t threads) {
  static std::once_flag once;
  std::call_once(once, [&] {
    std::fprintf(stderr,
                 "[offload] warning: io_uring is refused here (io_uring_queue_init: %s; the kernel "
                 "or a container's seccomp profile forbids it): swap I/O uses the posix backend, "
                 "pread/pwrite in %lld thread(s)\n",
                 std::strerror(error), static_cast<long long>(threads));
  });
}

}  // namespace

struct SwapFile::Impl {
  std::filesystem::path path;
  int64_t bytes = 0;
  int buffered_fd = -1;
  int direct_fd = -1;
  bool direct = false;
  bool created = false;
  const char* backend = "posix";
  std::atomic<int64_t> bytes_read{0};  // by requests finished without error
  std::atomic<int64_t> bytes_written{0};
  std::vector<std::unique_ptr<detail::SwapIoWorker>> workers;

  ~Impl() {
    workers.clear();  // finishes every part in flight before the descriptors close
    if (direct_fd >= 0) ::close(direct_fd);
    if (buffered_fd >= 0) ::close(buffered_fd);
    if (created) ::unlink(path.c_str());
  }
};

SwapFile::SwapFile(const SwapDirectory& dir, const std::string& name, int64_t bytes,
                   const config::AioConfig& aio)
    : impl_(std::make_unique<Impl>()) {
  check_aio(aio);
  if (bytes < 0) throw ValueError("offload", str("swap file ", name, " of ", bytes, " bytes"));
  Impl& f = *impl_;
  f.path = dir.file_path(name);
  f.bytes = bytes;
  f.buffered_fd = ::open(f.path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (f.buffered_fd < 0) throw_errno("offload", "cannot create swap file", f.path);
  f.created = true;
  if (bytes > 0) {
    const int rc = ::posix_fallocate(f.buffered_fd, 0, bytes);
    if (rc != 0)
      throw IoError("offload",
                    str("cannot reserve ", format_bytes(static_cast<size_t>(bytes)), " (", bytes,
                        " bytes) for swap file ", f.path.string(), ": ", std::strerror(rc),
                        rc == ENOSPC ? " (the disk of nvme_path is full)" : ""));
  }
  f.direct_fd = ::open(f.path.c_str(), O_RDWR | O_DIRECT | O_CLOEXEC);
  f.direct = f.direct_fd >= 0;
  if (!f.direct) {
    if (errno != EINVAL) throw_errno("offload", "cannot open (O_DIRECT) swap file", f.path);
    warn_direct_io_refused("offload", dir.path(), EINVAL,
                           "its swap files use buffered I/O through the page cache");
  }

  detail::SwapWorkerSettings settings;
  settings.direct_fd = f.direct ? f.direct_fd : f.buffered_fd;
  settings.buffered_fd = f.buffered_fd;
  settings.direct = f.direct;
  settings.chunk_bytes = f.direct ? round_up(aio.block_size, kSwapAlignment) : aio.block_size;
  settings.queue_depth = static_cast<int>(aio.queue_depth);
  settings.single_submit = aio.single_submit;
  settings.overlap_events = aio.overlap_events;

  const auto threads = static_cast<size_t>(aio.intra_op_parallelism);
  std::vector<detail::IoRingPtr> rings(threads);
  if (aio.io_backend == "async_io") {
    f.backend = "io_uring";
    for (auto& ring : rings) {
      int error = 0;
      ring = detail::open_io_ring(settings.queue_depth, &error);
      if (!ring) {
        warn_no_io_uring(error, aio.intra_op_parallelism);
        f.backend = "posix";
        rings.clear();
        rings.resize(threads);
        break;
      }
    }
  }
  for (auto& ring : rings)
    f.workers.push_back(std::make_unique<detail::SwapIoWorker>(settings, std::move(ring)));
}

SwapFile::~SwapFile() = default;
SwapFile::SwapFile(SwapFile&& other) noexcept = default;
SwapFile& SwapFile::operator=(SwapFile&& other) noexcept = default;

int64_t SwapFile::bytes() const {
  return impl_->bytes;
}
const std::filesystem::path& SwapFile::path() const {
  return impl_->path;
}
int64_t SwapFile::bytes_read() const {
  return impl_->bytes_read.load();
}
int64_t SwapFile::bytes_written() const {
  return impl_->bytes_written.load();
}
bool SwapFile::direct() const {
  return impl_->direct;
}
const char* SwapFile::backend() const {
  return impl_->backend;
}

SwapRequest SwapFile::write(int64_t offset, const void* src, int64_t bytes) {
  // The workers only read from `src` for a write.
  return start(true, offset, static_cast<std::byte*>(const_cast<void*>(src)), bytes);
}

SwapRequest SwapFile::read(int64_t offset, void* dst, int64_t bytes) {
  return start(false, offset, static_cast<std::byte*>(dst), bytes);
}

// A request on an O_DIRECT file is cut on the 4096-byte grid of the file: the partial blocks at
// either end (if any) become small buffered parts, the whole blocks between them are shared out
// over the worker threads in slices of whole blocks.
SwapRequest SwapFile::start(bool write, int64_t offset, std::byte* memory, int64_t bytes) {
  Impl& f = *impl_;
  const char* op = write ? "write" : "read";
  if (offset < 0 || bytes < 0 || offset > f.bytes || bytes > f.bytes - offset)
    throw ValueError("offload", str(op, " of ", bytes, " bytes at offset ", offset, " of ",
                                    f.path.string(), " is outside the file (", f.bytes, " bytes)"));
  if (bytes > 0 && memory == nullptr)
    throw ValueError("offload", str(op, " of ", bytes, " bytes at offset ", offset, " of ",
                                    f.path.string(), " with a null buffer"));
  const int64_t end = offset + bytes;
  const int64_t grid = f.direct ? kSwapAlignment : 1;
  const int64_t first_block = round_up(offset, grid);
  const int64_t last_block = round_down(end, grid);

  struct Piece {
    int64_t at, len;
    bool chunked;
    size_t worker;
  };
  std::vector<Piece> pieces;
  const size_t threads = f.workers.size();
  if (first_block >= last_block) {
    if (bytes > 0) pieces.push_back({offset, bytes, false, 0});
  } else {
    if (first_block > offset) pieces.push_back({offset, first_block - offset, false, 0});
    const int64_t middle = last_block - first_block;
    const int64_t slice = round_up(
        (middle + static_cast<int64_t>(threads) - 1) / static_cast<int64_t>(threads), grid);
    size_t worker = 0;
    for (int64_t at = first_block; at < last_block; at += slice, ++worker)
      pieces.push_back({at, std::min(slice, last_block - at), true, worker});
    if (end > last_block) pieces.push_back({last_block, end - last_block, false, worker - 1});
  }

  auto state = std::make_shared<detail::SwapRequestState>(
      static_cast<int>(pieces.size()),
      str(op, " of ", bytes, " bytes at offset ", offset, " of ", f.path.string()),
      write ? &f.bytes_written : &f.bytes_read, bytes);
  for (const Piece& p : pieces) {
    detail::SwapPart part;
    part.write = write;
    part.file_offset = p.at;
    part.memory = memory + (p.at - offset);
    part.bytes = p.len;
    part.chunked = p.chunked;
    part.request = state;
    f.workers[p.worker]->push(std::move(part));
  }
  return SwapRequest(std::move(state));
}

// ---- SwapRequest ----

SwapRequest::SwapRequest(std::shared_ptr<detail::SwapRequestState> state)
    : state_(std::move(state)) {}

SwapRequest::~SwapRequest() {
  finish_quietly();
}

SwapRequest& SwapRequest::operator=(SwapRequest&& other) noexcept {
  if (this != &other) {
    finish_quietly();
    state_ = std::move(other.state_);
  }
  return *this;
}

void SwapRequest::wait() {
  if (!state_) return;
  state_->wait();
  const std::string failure = state_->failure();
  if (failure.empty()) return;
  state_->take_unreported();
  throw IoError("offload", failure);
}

bool SwapRequest::done() const {
  return !state_ || state_->done();
}

void SwapRequest::finish_quietly() noexcept {
  if (!state_) return;
  state_->wait();
  const std::string failure = state_->failure();
  if (!failure.empty() && state_->take_unreported())
    std::fprintf(stderr, "[offload] %s (a request nobody waited for)\n", failure.c_str());
  state_.reset();
}

}  // namespace zt::io
