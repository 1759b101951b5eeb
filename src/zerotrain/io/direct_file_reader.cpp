// DirectReadFile and DirectFileReader: ranges of a file in large O_DIRECT requests on reader
// threads, checksummed where they land. See direct_file_reader.h.
#include "zerotrain/io/direct_file_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <future>
#include <mutex>
#include <thread>

#include "zerotrain/core/error.h"
#include "zerotrain/core/io_error.h"
#include "zerotrain/io/aligned_host_buffer.h"
#include "zerotrain/io/swap_io_worker.h"

namespace zt::io {

namespace {

int64_t round_down(int64_t v, int64_t to) {
  return v / to * to;
}

constexpr int64_t kMinRequestBytes = int64_t{1} << 20;

// One request: the cell [begin, end) of the buffer grid that the ranges need, and the first range
// that reaches into it.
struct Chunk {
  int64_t begin = 0;
  int64_t end = 0;
  size_t first_range = 0;
};

// The CRC-32 of one range's bytes within one chunk.
struct PieceCrc {
  size_t range = 0;
  int64_t begin = 0;  // file offset
  int64_t bytes = 0;
  uint32_t crc = 0;
};

std::vector<Chunk> plan_chunks(const std::vector<ByteRange>& ranges, int64_t grid) {
  std::vector<Chunk> chunks;
  for (size_t r = 0; r < ranges.size(); ++r) {
    const ByteRange& range = ranges[r];
    for (int64_t at = range.begin; at < range.end;) {
      const int64_t cell_end = round_down(at, grid) + grid;
      const int64_t to = std::min(range.end, cell_end);
      if (!chunks.empty() && chunks.back().end > round_down(at, grid))
        chunks.back().end = to;  // a cell shared with the previous range
      else
        chunks.push_back({at, to, r});
      at = to;
    }
  }
  return chunks;
}

}  // namespace

// ---- DirectReadFile ----

DirectReadFile::DirectReadFile(const std::filesystem::path& path, bool buffered,
                               std::string component)
    : path_(path), component_(std::move(component)) {
  buffered_fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (buffered_fd_ < 0) throw_errno(component_, "cannot open", path);
  struct stat st {};
  if (::fstat(buffered_fd_, &st) != 0) {
    const int error = errno;
    ::close(buffered_fd_);
    errno = error;
    throw_errno(component_, "cannot stat", path);
  }
  size_ = static_cast<int64_t>(st.st_size);
  if (buffered) return;
  direct_fd_ = ::open(path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
  if (direct_fd_ < 0)
    warn_direct_io_refused(component_, path.parent_path(), errno,
                           "its files are read through the page cache");
}

DirectReadFile::~DirectReadFile() {
  if (direct_fd_ >= 0) ::close(direct_fd_);
  if (buffered_fd_ >= 0) ::close(buffered_fd_);
}

void DirectReadFile::read_small(int64_t offset, int64_t bytes, void* dst) const {
  int64_t done = 0;
  const int err =
      detail::transfer_all(false, buffered_fd_, static_cast<std::byte*>(dst), bytes, offset, &done);
  if (err > 0) {
    errno = err;
    throw_errno(component_, str("cannot read ", bytes, " bytes at offset ", offset, " of"), path_);
  }
  if (err < 0)
    throw FormatError(component_, str(path_.string(), ": the file ends at byte ", offset + done,
                                      ", before the ", bytes, " bytes at offset ", offset));
}

// ---- DirectFileReader ----

struct DirectFileReader::Impl {
  int64_t buffer_bytes = 0;
  std::vector<AlignedHostBuffer> buffers;  // one per request in flight, grown as reads need
  std::atomic<uint64_t> bytes_read{0};

  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::packaged_task<void()>> queue;
  bool stopping = false;
  std::vector<std::thread> threads;

  void loop() {
    for (;;) {
      std::packaged_task<void()> task;
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return stopping || !queue.empty(); });
        if (queue.empty()) return;
        task = std::move(queue.front());
        queue.pop_front();
      }
      task();  // its exception lands in its future
    }
  }

  std::future<void> submit(std::function<void()> work) {
    std::packaged_task<void()> task(std::move(work));
    std::future<void> done = task.get_future();
    {
      std::lock_guard<std::mutex> lock(mu);
      queue.push_back(std::move(task));
    }
    cv.notify_one();
    return done;
  }

  // Reads `chunk` of `file` into `buf` (the data of the chunk then starts at the returned pointer)
  // and checksums each range's part of it into `crcs`.
  const std::byte* read_chunk(const DirectReadFile& file, const Chunk& chunk,
                              const std::vector<ByteRange>& ranges, std::byte* buf,
                              std::vector<PieceCrc>& crcs) {
    const std::string& component = file.component();
    // A file shorter than the request now (O_DIRECT may answer EINVAL at the cut rather than a
    // short read) is a truncation; anything else the system's error.
    auto fail = [&](int err, int64_t at, int64_t len, int64_t done) {
      struct stat st {};
      int64_t ends = at + done;
      if (::fstat(file.buffered_fd(), &st) == 0 && st.st_size < at + len) {
        ends = static_cast<int64_t>(st.st_size);
        err = -1;
      }
      if (err > 0)
        throw IoError(component, str("read of ", len, " bytes at offset ", at, " of ",
                                     file.path().string(), " failed: ", std::strerror(err)));
      throw FormatError(component,
                        str(file.path().string(), ": the file ends at byte ", ends, ", before the ",
                            len, " bytes at offset ", at, " (truncated while read)"));
    };
    int64_t start = chunk.begin;
    if (file.direct()) {
      // Whole 4096-byte blocks with O_DIRECT; the file's last partial block, if the chunk needs
      // it, through the page cache.
      start = round_down(chunk.begin, kSwapAlignment);
      const int64_t whole_blocks_end = round_down(file.size(), kSwapAlignment);
      const int64_t direct_end =
          std::max(start, std::min(swap_aligned(chunk.end), whole_blocks_end));
      int64_t done = 0;
      if (direct_end > start) {
        const int err =
            detail::transfer_all(false, file.direct_fd(), buf, direct_end - start, start, &done);
        if (err != 0) fail(err, start, direct_end - start, done);
      }
      if (chunk.end > direct_end) {
        const int err = detail::transfer_all(false, file.buffered_fd(), buf + (direct_end - start),
                                             chunk.end - direct_end, direct_end, &done);
        if (err != 0) fail(err, direct_end, chunk.end - direct_end, done);
      }
      bytes_read += static_cast<uint64_t>(std::max(direct_end, chunk.end) - start);
    } else {
      int64_t done = 0;
      const int err =
          detail::transfer_all(false, file.buffered_fd(), buf, chunk.end - start, start, &done);
      if (err != 0) fail(err, start, chunk.end - start, done);
      bytes_read += static_cast<uint64_t>(chunk.end - start);
    }
    const std::byte* data = buf + (chunk.begin - start);
    crcs.clear();
    for (size_t r = chunk.first_range; r < ranges.size() && ranges[r].begin < chunk.end; ++r) {
      const int64_t from = std::max(ranges[r].begin, chunk.begin);
      const int64_t to = std::min(ranges[r].end, chunk.end);
      if (from >= to) continue;
      const auto crc = crc32_z(0, reinterpret_cast<const Bytef*>(data + (from - chunk.begin)),
                               static_cast<z_size_t>(to - from));
      crcs.push_back({r, from, to - from, static_cast<uint32_t>(crc)});
    }
    return data;
  }
};

DirectFileReader::DirectFileReader(const DirectReadOptions& options)
    : impl_(std::make_unique<Impl>()) {
  if (options.buffer_bytes < 1 || options.buffer_bytes > (int64_t{1} << 30))
    throw ValueError(
        "io", str("direct read buffer of ", options.buffer_bytes, " bytes: must be in [1, 1 GiB]"));
  if (options.buffers < 1 || options.buffers > 64)
    throw ValueError(
        "io", str("direct reads with ", options.buffers, " buffers in flight: must be in [1, 64]"));
  impl_->buffer_bytes = swap_aligned(options.buffer_bytes);
  impl_->buffers.resize(static_cast<size_t>(options.buffers));
  for (int i = 0; i < options.buffers; ++i)
    impl_->threads.emplace_back([impl = impl_.get()] { impl->loop(); });
}

DirectFileReader::~DirectFileReader() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stopping = true;
  }
  impl_->cv.notify_all();
  for (std::thread& t : impl_->threads)
    t.join();
}

int64_t DirectFileReader::buffer_bytes() const {
  return impl_->buffer_bytes;
}
int DirectFileReader::buffers() const {
  return static_cast<int>(impl_->buffers.size());
}
uint64_t DirectFileReader::bytes_read() const {
  return impl_->bytes_read.load();
}

std::vector<uint32_t> DirectFileReader::read(const DirectReadFile& file,
                                             const std::vector<ByteRange>& ranges,
                                             const RangeSink& sink, SinkOn sink_on) {
  Impl& m = *impl_;
  int64_t last_end = 0;
  for (const ByteRange& r : ranges) {
    if (r.begin < last_end || r.end < r.begin || r.end > file.size())
      throw ValueError(
          file.component(),
          str(file.path().string(), ": bytes [", r.begin, ", ", r.end,
              ") to read are out of order or outside the file (", file.size(), " bytes)"));
    last_end = r.end;
  }
  // A read smaller than all the buffers together is cut into one request per buffer (of at least
  // kMinRequestBytes), so that a resume's tensor-sized reads keep several requests in flight too.
  int64_t span = 0;
  for (const ByteRange& r : ranges)
    span += r.end - r.begin;
  const auto buffers = static_cast<int64_t>(m.buffers.size());
  const int64_t grid = std::min(
      m.buffer_bytes, std::max(kMinRequestBytes, swap_aligned((span + buffers - 1) / buffers)));
  const std::vector<Chunk> chunks = plan_chunks(ranges, grid);
  // The buffers grow to what a request needs, up to buffer_bytes: small files stay small.
  int64_t need = 0;
  for (const Chunk& c : chunks)
    need = std::max(need, swap_aligned(c.end) - round_down(c.begin, kSwapAlignment));
  for (AlignedHostBuffer& b : m.buffers)
    if (b.bytes() < need) b = AlignedHostBuffer(need);
  const size_t slots = m.buffers.size();
  struct Slot {
    std::future<void> done;
    const std::byte* data = nullptr;
    std::vector<PieceCrc> crcs;
  };
  std::vector<Slot> slot(slots);
  // Every request in flight ends before the buffers or `ranges` can go, even on an exception.
  struct WaitAll {
    std::vector<Slot>& slots;
    ~WaitAll() {
      for (Slot& s : slots)
        if (s.done.valid()) s.done.wait();
    }
  } wait_all{slot};

  auto start = [&](size_t c) {
    Slot& s = slot[c % slots];
    std::byte* buf = m.buffers[c % slots].data();
    const RangeSink* on_reader = sink && sink_on == SinkOn::reader_threads ? &sink : nullptr;
    s.done = m.submit([&m, &file, &ranges, &s, buf, on_reader, chunk = chunks[c]] {
      s.data = m.read_chunk(file, chunk, ranges, buf, s.crcs);
      if (on_reader)
        for (const PieceCrc& p : s.crcs)
          (*on_reader)(p.range, p.begin - ranges[p.range].begin, s.data + (p.begin - chunk.begin),
                       p.bytes);
    });
  };
  std::vector<uint32_t> crcs(ranges.size(), 0);
  size_t next = 0;
  for (; next < std::min(slots, chunks.size()); ++next)
    start(next);
  for (size_t c = 0; c < chunks.size(); ++c) {
    Slot& s = slot[c % slots];
    s.done.get();
    for (const PieceCrc& p : s.crcs) {
      crcs[p.range] = static_cast<uint32_t>(crc32_combine(crcs[p.range], p.crc, p.bytes));
      if (sink && sink_on == SinkOn::caller_in_order)
        sink(p.range, p.begin - ranges[p.range].begin, s.data + (p.begin - chunks[c].begin),
             p.bytes);
    }
    if (next < chunks.size()) start(next++);
  }
  return crcs;
}

}  // namespace zt::io
