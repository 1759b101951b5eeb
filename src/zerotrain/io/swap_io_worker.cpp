// The swap I/O worker threads: io_uring (liburing) and posix. See swap_io_worker.h.
#include "zerotrain/io/swap_io_worker.h"

#include <liburing.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "zerotrain/core/error.h"

namespace zt::io::detail {

class IoRing {
 public:
  io_uring ring{};
};

void IoRingDeleter::operator()(IoRing* r) const {
  io_uring_queue_exit(&r->ring);
  delete r;
}

IoRingPtr open_io_ring(int entries, int* error) {
  auto r = std::make_unique<IoRing>();
  const int rc = io_uring_queue_init(static_cast<unsigned>(entries), &r->ring, 0);
  if (rc < 0) {
    *error = -rc;
    return nullptr;  // never set up: nothing to tear down
  }
  return IoRingPtr(r.release());
}

// ---- SwapRequestState ----

SwapRequestState::SwapRequestState(int parts, std::string what, std::atomic<int64_t>* counter,
                                   int64_t bytes)
    : parts_left_(parts), what_(std::move(what)), counter_(counter), bytes_(bytes) {}

void SwapRequestState::part_finished(int error, int64_t offset, const std::string& detail) {
  std::lock_guard<std::mutex> lock(mu_);
  if (error != 0 && failure_.empty()) {
    failure_ = str(what_, " failed at offset ", offset, ": ",
                   error > 0 ? std::string(std::strerror(error)) : detail);
    if (error == ENOSPC || error == EDQUOT)
      failure_ += " (the disk of nvme_path is full)";
    else if (error == EFBIG)
      failure_ += " (the process's file-size limit, ulimit -f, is reached)";
  }
  if (--parts_left_ > 0) return;
  if (failure_.empty()) counter_->fetch_add(bytes_);
  cv_.notify_all();
}

void SwapRequestState::wait() const {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return parts_left_ == 0; });
}

bool SwapRequestState::done() const {
  std::lock_guard<std::mutex> lock(mu_);
  return parts_left_ == 0;
}

std::string SwapRequestState::failure() const {
  std::lock_guard<std::mutex> lock(mu_);
  return failure_;
}

// ---- synchronous transfers ----

int transfer_all(bool write, int fd, std::byte* buf, int64_t len, int64_t off, int64_t* done) {
  *done = 0;
  while (*done < len) {
    const auto n = static_cast<size_t>(len - *done);
    const ssize_t got = write ? ::pwrite(fd, buf + *done, n, off + *done)
                              : ::pread(fd, buf + *done, n, off + *done);
    if (got < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (got == 0) return -1;
    *done += got;
  }
  return 0;
}

namespace {

std::string short_detail(bool write, int64_t done, int64_t len) {
  return str("short ", write ? "write" : "read", " (", done, " of ", len, " bytes)");
}

void warn_ring_broken(int error) {
  static std::atomic<bool> warned{false};
  if (!warned.exchange(true))
    std::fprintf(stderr,
                 "[offload] warning: io_uring failed (%s); swap I/O goes on with the posix backend "
                 "(pread/pwrite)\n",
                 std::strerror(error));
}

}  // namespace

// ---- SwapIoWorker ----

SwapIoWorker::SwapIoWorker(const SwapWorkerSettings& settings, IoRingPtr ring)
    : settings_(settings), ring_(std::move(ring)) {
  thread_ = std::thread([this] { loop(); });
}

SwapIoWorker::~SwapIoWorker() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void SwapIoWorker::push(SwapPart part) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(part));
  }
  cv_.notify_one();
}

void SwapIoWorker::loop() {
  for (;;) {
    SwapPart part;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and every queued part is done
      part = std::move(queue_.front());
      queue_.pop_front();
    }
    Failure f;
    try {
      f = run(part);
    } catch (const std::exception& e) {  // only allocation can throw in run()
      f = {-1, part.file_offset, e.what()};
    }
    part.request->part_finished(f.error, f.offset, f.detail);
  }
}

SwapIoWorker::Failure SwapIoWorker::run(const SwapPart& part) {
  if (!part.chunked) {
    int64_t done = 0;
    const int err = transfer_all(part.write, settings_.buffered_fd, part.memory, part.bytes,
                                 part.file_offset, &done);
    if (err == 0) return {};
    return {err, part.file_offset + done, short_detail(part.write, done, part.bytes)};
  }
  return ring_ ? run_chunks_uring(part) : run_chunks_posix(part);
}

std::byte* SwapIoWorker::bounce_slots(int slots) {
  const int64_t need = settings_.chunk_bytes * slots;
  if (bounce_.bytes() < need) bounce_ = AlignedHostBuffer(need);
  return bounce_.data();
}

SwapIoWorker::Failure SwapIoWorker::run_chunks_posix(const SwapPart& part) {
  const int64_t chunk = settings_.chunk_bytes;
  const bool bounced = settings_.direct && !is_swap_aligned(part.memory);
  std::byte* bounce = bounced ? bounce_slots(1) : nullptr;
  for (int64_t at = 0; at < part.bytes; at += chunk) {
    const int64_t len = std::min(chunk, part.bytes - at);
    std::byte* buf = bounced ? bounce : part.memory + at;
    if (bounced && part.write) std::memcpy(buf, part.memory + at, static_cast<size_t>(len));
    int64_t done = 0;
    const int err =
        transfer_all(part.write, settings_.direct_fd, buf, len, part.file_offset + at, &done);
    if (err != 0) return {err, part.file_offset + at + done, short_detail(part.write, done, len)};
    if (bounced && !part.write) std::memcpy(part.memory + at, buf, static_cast<size_t>(len));
  }
  return {};
}

// Keeps up to queue_depth chunks in flight: with overlap_events a new chunk is queued as soon as
// one completes, without it the worker submits a batch and reaps all of it before the next.
// single_submit submits each chunk as it is queued instead of one submit per batch.
SwapIoWorker::Failure SwapIoWorker::run_chunks_uring(const SwapPart& part) {
  const int64_t chunk = settings_.chunk_bytes;
  const int64_t chunks = (part.bytes + chunk - 1) / chunk;
  const int depth = settings_.queue_depth;
  const bool bounced = settings_.direct && !is_swap_aligned(part.memory);
  std::byte* bounce = bounced ? bounce_slots(depth) : nullptr;
  io_uring* ring = &ring_->ring;

  struct Slot {
    int64_t at = 0, len = 0;
    std::byte* buf = nullptr;
  };
  std::vector<Slot> slots(static_cast<size_t>(depth));
  std::vector<int> free_slots;
  for (int s = depth - 1; s >= 0; --s)
    free_slots.push_back(s);

  Failure failure;
  int64_t next = 0;
  int queued = 0;     // prepared, not yet submitted
  int submitted = 0;  // submitted, not yet reaped
  bool ring_broken = false;
  int busy_retries = 0;
  auto fail = [&](const Failure& f) {
    if (failure.error == 0) failure = f;
  };
  auto submit = [&] {
    while (queued > 0) {
      const int rc = io_uring_submit(ring);
      if ((rc == -EINTR || rc == -EAGAIN || rc == -EBUSY) && busy_retries++ < 1000) {
        if (submitted > 0) return;  // reaping makes room; the rest goes with the next submit
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        continue;
      }
      if (rc < 0) {
        // Unsubmitted entries never reach the kernel: the ring is dropped once the submitted ones
        // are reaped, and this worker goes on with pread/pwrite.
        fail({-rc, part.file_offset + next * chunk, ""});
        warn_ring_broken(-rc);
        ring_broken = true;
        queued = 0;
        return;
      }
      queued -= rc;
      submitted += rc;
    }
  };
  auto queue_one = [&] {
    const int s = free_slots.back();
    free_slots.pop_back();
    Slot& slot = slots[static_cast<size_t>(s)];
    slot.at = next * chunk;
    slot.len = std::min(chunk, part.bytes - slot.at);
    slot.buf = bounced ? bounce + s * chunk : part.memory + slot.at;
    if (bounced && part.write)
      std::memcpy(slot.buf, part.memory + slot.at, static_cast<size_t>(slot.len));
    io_uring_sqe* sqe = io_uring_get_sqe(ring);
    ZT_ASSERT(sqe != nullptr, "offload", "io_uring submission queue full at depth ", depth);
    const auto off = static_cast<uint64_t>(part.file_offset + slot.at);
    if (part.write)
      io_uring_prep_write(sqe, settings_.direct_fd, slot.buf, static_cast<unsigned>(slot.len), off);
    else
      io_uring_prep_read(sqe, settings_.direct_fd, slot.buf, static_cast<unsigned>(slot.len), off);
    io_uring_sqe_set_data64(sqe, static_cast<uint64_t>(s));
    ++next;
    ++queued;
    if (settings_.single_submit) submit();
  };
  auto complete = [&](io_uring_cqe* cqe) {
    const int s = static_cast<int>(io_uring_cqe_get_data64(cqe));
    const int res = cqe->res;
    io_uring_cqe_seen(ring, cqe);
    --submitted;
    Slot& slot = slots[static_cast<size_t>(s)];
    free_slots.push_back(s);
    const int64_t off = part.file_offset + slot.at;
    if (res < 0) return fail({-res, off, ""});
    int64_t done = res;
    if (done < slot.len) {  // a partial transfer: finish it here, or learn why not
      int64_t more = 0;
      const int err = transfer_all(part.write, settings_.direct_fd, slot.buf + done,
                                   slot.len - done, off + done, &more);
      done += more;
      if (err != 0) return fail({err, off + done, short_detail(part.write, done, slot.len)});
    }
    if (bounced && !part.write)
      std::memcpy(part.memory + slot.at, slot.buf, static_cast<size_t>(slot.len));
  };
  auto reap = [&](bool all) {
    while (submitted > 0) {
      io_uring_cqe* cqe = nullptr;
      const int rc = io_uring_wait_cqe(ring, &cqe);
      if (rc == -EINTR || rc == -EAGAIN) continue;
      ZT_ASSERT(rc == 0, "offload", "io_uring_wait_cqe: ", std::strerror(-rc));
      complete(cqe);
      while (submitted > 0 && io_uring_peek_cqe(ring, &cqe) == 0)
        complete(cqe);
      if (!all) return;
    }
  };

  for (;;) {
    while (failure.error == 0 && !ring_broken && next < chunks && !free_slots.empty())
      queue_one();
    if (!ring_broken) submit();
    // Queued chunks are always submitted and submitted ones always reaped before returning: the
    // kernel must not touch this part's memory (or the bounce slots) after the part is over.
    if (submitted == 0 && (queued == 0 || ring_broken)) {
      if (failure.error != 0 || ring_broken || next >= chunks) break;
      continue;
    }
    reap(!settings_.overlap_events || failure.error != 0 || ring_broken);
  }
  reap(true);
  if (ring_broken) ring_.reset();
  return failure;
}

}  // namespace zt::io::detail
