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
#include "zerotrain/core/files.h"
#include "zerotrain/core/io_error.h"
#include "zerotrain/io/aligned_host_buffer.h"
#include "zerotrain/io/swap_io_worker.h"

namespace zt::io {

namespace {

int64_t round_down(int64_t v, int64_t to) {
  return v / to * to;
}

constexpr int64_t kMinRequestBytes = int64_t{1} << 20;

// One request: the cell [begin, end) of the buffer grid that the ranges need, and the first and
// last range that reach into it.
struct Chunk {
  int64_t begin = 0;
  int64_t end = 0;
  size_t first_range = 0;
  size_t last_range = 0;
};

// The CRC-32 of one range's bytes within one chunk.
struct PieceCrc {
  size_t range = 0;
  int64_t begin = 0;  // file offset
  int64_t bytes = 0;
  uint32_t crc = 0;
};

// The requests for `ranges` in the order given (ascending or not): each range cut on the grid's
// cells, a cell shared by two ranges that follow each other in the file read once.
std::vector<Chunk> plan_chunks(const std::vector<ByteRange>& ranges, int64_t grid) {
  std::vector<Chunk> chunks;
  for (size_t r = 0; r < ranges.size(); ++r) {
    const ByteRange& range = ranges[r];
    for (int64_t at = range.begin; at < range.end;) {
      const int64_t cell_end = round_down(at, grid) + grid;
      const int64_t to = std::min(range.end, cell_end);
      if (!chunks.empty() && at >= chunks.back().end && chunks.back().end > round_down(at, grid)) {
        chunks.back().end = to;  // a cell shared with the previous range
        chunks.back().last_range = r;
      } else {
        chunks.push_back({at, to, r, r});
      }
      at = to;
    }
  }
  return chunks;
}

// The buffer bytes the largest of `chunks` needs (its 4096-byte blocks).
int64_t buffer_need(const std::vector<Chunk>& chunks) {
  int64_t need = 0;
  for (const Chunk& c : chunks)
    need = std::max(need, swap_aligned(c.end) - round_down(c.begin, kSwapAlignment));
  return need;
}

}  // namespace

// ---- DirectReadFile ----

DirectReadFile::DirectReadFile(const std::filesystem::path& path, bool buffered,
                               std::string component)
    : path_(path), component_(std::move(component)) {
  if (const std::string kind = non_regular_kind(path); !kind.empty())
    throw IoError(component_, str(path.string(), " is ", kind, ", not a regular file"));
  buffered_fd_ = open_read_only(path);
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
  uint64_t ranges_read_ahead = 0;
  std::unique_ptr<Pass> ahead;  // the read-ahead, while ranges of it are left to take

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
    for (size_t r = chunk.first_range; r <= chunk.last_range; ++r) {
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

// One pass over `ranges` of a file in the order given: its chunks read into the reader's buffers,
// one per buffer in flight, and handed over range by range (take). A chunk's buffer is reused once
// every range in it is taken.
struct DirectFileReader::Pass {
  struct Slot {
    std::future<void> done;  // valid from the chunk's start until it is awaited
    const std::byte* data = nullptr;
    std::vector<PieceCrc> crcs;
  };

  Impl& m;
  const DirectReadFile& file;
  const std::vector<ByteRange> ranges;
  const std::vector<Chunk> chunks;
  const RangeSink* reader_sink;  // called on the reader threads as each chunk lands, or null
  std::vector<Slot> slots;       // chunk c in slots[c % slots.size()], read into buffers[same]
  size_t started = 0;            // chunks submitted
  size_t released = 0;           // chunks whose ranges are all taken
  size_t taken = 0;              // ranges handed over

  Pass(Impl& impl, const DirectReadFile& f, std::vector<ByteRange> rs, int64_t grid,
       const RangeSink* on_reader)
      : m(impl),
        file(f),
        ranges(std::move(rs)),
        chunks(plan_chunks(ranges, grid)),
        reader_sink(on_reader),
        slots(m.buffers.size()) {
    // The buffers grow to what a request needs, up to buffer_bytes: small files stay small.
    const int64_t need = buffer_need(chunks);
    for (AlignedHostBuffer& b : m.buffers)
      if (b.bytes() < need) b = AlignedHostBuffer(need);
    fill();
  }
  // Every request in flight ends before the buffers or `ranges` can go, even on an exception.
  ~Pass() {
    for (Slot& s : slots)
      if (s.done.valid()) s.done.wait();
  }
  Pass(const Pass&) = delete;
  Pass& operator=(const Pass&) = delete;

  bool finished() const { return taken == ranges.size(); }

  // Whether the next ranges to take are `want` of `f`, in that order.
  bool next_are(const DirectReadFile& f, const std::vector<ByteRange>& want) const {
    if (&f != &file || want.empty() || want.size() > ranges.size() - taken) return false;
    for (size_t i = 0; i < want.size(); ++i)
      if (want[i].begin != ranges[taken + i].begin || want[i].end != ranges[taken + i].end)
        return false;
    return true;
  }

  // Starts chunks while a buffer is free.
  void fill() {
    for (; started < chunks.size() && started < released + slots.size(); ++started) {
      Slot& s = slots[started % slots.size()];
      std::byte* buf = m.buffers[started % slots.size()].data();
      s.done = m.submit([this, &s, buf, chunk = chunks[started]] {
        s.data = m.read_chunk(file, chunk, ranges, buf, s.crcs);
        if (reader_sink)
          for (const PieceCrc& p : s.crcs)
            (*reader_sink)(p.range, p.begin - ranges[p.range].begin,
                           s.data + (p.begin - chunk.begin), p.bytes);
      });
    }
  }

  // Hands the next `count` ranges to `caller_sink` (if any) on this thread, numbered from 0;
  // returns their CRC-32s. A failed read's exception passes through.
  std::vector<uint32_t> take(size_t count, const RangeSink* caller_sink) {
    std::vector<uint32_t> crcs(count, 0);
    for (size_t i = 0; i < count; ++i) {
      const size_t r = taken + i;
      while (released < chunks.size() && chunks[released].first_range <= r) {
        const Chunk& c = chunks[released];
        Slot& s = slots[released % slots.size()];
        if (s.done.valid()) s.done.get();
        for (const PieceCrc& p : s.crcs) {
          if (p.range != r) continue;
          crcs[i] = static_cast<uint32_t>(crc32_combine(crcs[i], p.crc, p.bytes));
          if (caller_sink)
            (*caller_sink)(i, p.begin - ranges[r].begin, s.data + (p.begin - c.begin), p.bytes);
        }
        if (c.last_range > r) break;  // the chunk holds the next range's bytes too
        ++released;
        fill();
      }
    }
    taken += count;
    return crcs;
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
  impl_->ahead.reset();
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
uint64_t DirectFileReader::ranges_read_ahead() const {
  return impl_->ranges_read_ahead;
}

void DirectFileReader::read_ahead(const DirectReadFile& file, std::vector<ByteRange> ranges) {
  cancel_read_ahead();
  for (const ByteRange& r : ranges)
    if (r.begin < 0 || r.end < r.begin || r.end > file.size())
      throw ValueError(file.component(),
                       str(file.path().string(), ": bytes [", r.begin, ", ", r.end,
                           ") to read ahead are outside the file (", file.size(), " bytes)"));
  if (ranges.empty()) return;
  impl_->ahead =
      std::make_unique<Pass>(*impl_, file, std::move(ranges), impl_->buffer_bytes, nullptr);
}

void DirectFileReader::cancel_read_ahead() {
  impl_->ahead.reset();
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
  if (m.ahead && m.ahead->next_are(file, ranges)) {
    std::vector<uint32_t> crcs;
    try {
      crcs = m.ahead->take(ranges.size(), sink ? &sink : nullptr);
    } catch (...) {
      m.ahead.reset();
      throw;
    }
    m.ranges_read_ahead += ranges.size();
    if (m.ahead->finished()) m.ahead.reset();
    return crcs;
  }
  m.ahead.reset();  // a read out of the read-ahead's order ends it
  // A read smaller than all the buffers together is cut into one request per buffer (of at least
  // kMinRequestBytes), so that a read of one tensor keeps several requests in flight too.
  int64_t span = 0;
  for (const ByteRange& r : ranges)
    span += r.end - r.begin;
  const auto buffers = static_cast<int64_t>(m.buffers.size());
  const int64_t grid = std::min(
      m.buffer_bytes, std::max(kMinRequestBytes, swap_aligned((span + buffers - 1) / buffers)));
  const bool on_reader = sink && sink_on == SinkOn::reader_threads;
  Pass pass(m, file, ranges, grid, on_reader ? &sink : nullptr);
  return pass.take(ranges.size(), sink && !on_reader ? &sink : nullptr);
}

}  // namespace zt::io
