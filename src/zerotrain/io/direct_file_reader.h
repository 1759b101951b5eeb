// Reading large files at the disk's rate: byte ranges of a file read in large O_DIRECT requests
// (buffer_bytes each, `buffers` of them in flight on as many reader threads), each buffer
// checksummed (CRC-32, zlib's) by the thread that read it and then handed, in file order, to the
// caller's sink. Memory is the fixed buffers whatever the file's size. Tested by
// tests/io/test_direct_file_reader.cpp; used by checkpoint/checkpoint_reader.cpp.
//
// [Note: checkpoint reads]
// Checkpoint shards are read once, start to end, from a page cache that does not hold them (a
// resume after a restart, `checkpoint inspect --verify`), and every byte is checksummed. Through a
// memory map the kernel reads such a file by page faults in readahead-sized requests while one
// thread checksums: on the GPU machine's virtio disk that reached 1.28 and 1.20 GB/s against
// dd's O_DIRECT read of 1.8 and 1.5 GB/s in the same runs (71-80%; MADV_WILLNEED gained
// nothing). Here the reads are 16 MiB O_DIRECT requests, four in flight, straight into aligned
// buffers that bypass the page cache (no copy into it, nothing to evict after), and the checksums
// run on the reader threads as the buffers land, so the disk never waits for a core; the caller
// only copies each buffer into its destination. tools/device_run_checkpoint.sh `load3b` measures
// it against dd in the same run.
//
// Request size: buffer_bytes, or for a read smaller than all the buffers together, one request
// per buffer (at least 1 MiB), so that one tensor's read keeps several requests in flight (a 16
// MiB tensor read as one request kept one in flight: a 2 GB resume took 4.1 s instead of 2.7 s).
//
// Read-ahead across reads: a resume asks for one tensor at a time, and a queue that drains at
// every tensor's end leaves the disk idle while the caller copies and asks again, where a memory
// map's kernel readahead keeps streaming (a 2 GB resume read in 2.8-3.5 s against the map's
// 2.5-2.7 s in the first measurements). So a caller that knows the order of its next reads announces it (read_ahead): those
// ranges are read in that order into the same buffers, the next ones in flight while the current
// one is taken, and a read that asks for exactly the next of them takes its bytes as they land. A
// read that asks for anything else (a jump back, or ahead past an announced range) ends the
// read-ahead, waiting only for the requests already in flight, and reads directly. Memory stays the
// fixed buffers; a read-ahead request that fails is reported only by the read that asks for it.
// The order is the caller's to know: a checkpoint's shard holds its tensors sorted by name (the
// safetensors layout), while a resume asks for them in the engine's order, which is the order they
// were saved in and the manifest lists (CheckpointReader reads ahead in that order). Measured on
// the 2-core CPU machine (a 2.1 GB f32 shard, page cache dropped, alternating rounds under the
// other jobs' load): median 2.32 s with the read-ahead, 2.60 s without, 2.63 s through the map,
// dd 1.3-2.2 s (bench/results/checkpoint_read_ahead_cpu_2core.json).
//
// Alignment: requests start and end on the 4096-byte grid of the file (kSwapAlignment); the bytes
// a range does not need at either end are read and dropped, and the last partial block of a file
// whose size is not a multiple of 4096 is read through the page cache. Where the filesystem refuses
// O_DIRECT (tmpfs before Linux 6.6) every read goes through the page cache, after the one warning
// the swap files print too (warn_direct_io_refused); DirectReadOptions::buffered asks for that
// path everywhere (tests, comparisons).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace zt::io {

struct DirectReadOptions {
  int64_t buffer_bytes = int64_t{16} << 20;  // one request; rounded up to a multiple of 4096
  int buffers = 4;                           // requests in flight (one reader thread each)
  bool buffered = false;  // read through the page cache even where O_DIRECT works
};

// A file opened for reading: an O_DIRECT descriptor (when the filesystem takes it) and a buffered
// one. `component` starts error messages and the warning.
class DirectReadFile {
 public:
  DirectReadFile(const std::filesystem::path& path, bool buffered, std::string component);
  ~DirectReadFile();
  DirectReadFile(const DirectReadFile&) = delete;
  DirectReadFile& operator=(const DirectReadFile&) = delete;

  const std::filesystem::path& path() const { return path_; }
  int64_t size() const { return size_; }
  bool direct() const { return direct_fd_ >= 0; }
  const std::string& component() const { return component_; }
  int direct_fd() const { return direct_fd_; }
  int buffered_fd() const { return buffered_fd_; }

  // `bytes` at `offset` through the page cache (a header); IoError or FormatError (the file ends
  // first) naming the file.
  void read_small(int64_t offset, int64_t bytes, void* dst) const;

 private:
  std::filesystem::path path_;
  std::string component_;
  int64_t size_ = 0;
  int direct_fd_ = -1;
  int buffered_fd_ = -1;
};

// A range of file bytes [begin, end).
struct ByteRange {
  int64_t begin = 0;
  int64_t end = 0;
};

// Called for every piece of range number `range` (where and in which order: SinkOn): `bytes`
// bytes at `offset_in_range` bytes from the range's start. `data` is valid during the call.
using RangeSink = std::function<void(size_t range, int64_t offset_in_range, const std::byte* data,
                                     int64_t bytes)>;

// Where a read calls its sink: on the calling thread in file order (any destination, a GPU's
// included), or on the reader threads as each buffer lands, several at once and in no order (for
// host destinations: the copies then run in parallel and overlap the disk).
enum class SinkOn { caller_in_order, reader_threads };

class DirectFileReader {
 public:
  // Starts the reader threads; the buffers are allocated by the reads, as large as their requests
  // (at most buffer_bytes each).
  explicit DirectFileReader(const DirectReadOptions& options = {});
  ~DirectFileReader();  // waits for the threads
  DirectFileReader(const DirectFileReader&) = delete;
  DirectFileReader& operator=(const DirectFileReader&) = delete;

  // Reads `ranges` of `file` (ascending, not overlapping, inside the file) once each, giving every
  // piece to `sink` (if any); returns each range's CRC-32. Throws ValueError for ranges out of
  // order or outside the file, IoError for a failed read and FormatError when the file ends early
  // (truncated while read), naming the file; the sink's exceptions pass through. Every request in
  // flight is over when it returns or throws, except the read-ahead's. When `ranges` are exactly
  // the read-ahead's next ranges, they are taken from it and the sink is called on this thread, in
  // order; otherwise the read-ahead ends first.
  std::vector<uint32_t> read(const DirectReadFile& file, const std::vector<ByteRange>& ranges,
                             const RangeSink& sink = {}, SinkOn sink_on = SinkOn::caller_in_order);

  // Starts reading `ranges` of `file` (inside it, in any order: the order the next reads will ask
  // for them) into the buffers, ending any earlier read-ahead ([Note: checkpoint reads]). `file`
  // must stay open until the read-ahead ends: a read outside it, cancel_read_ahead, the last of its
  // ranges taken, or this reader's end. Throws ValueError for a range outside the file.
  void read_ahead(const DirectReadFile& file, std::vector<ByteRange> ranges);
  // Ends the read-ahead (waits for its requests in flight; their bytes and errors are dropped).
  void cancel_read_ahead();

  int64_t buffer_bytes() const;
  int buffers() const;
  uint64_t bytes_read() const;         // from the disk, the dropped ends of requests included
  uint64_t ranges_read_ahead() const;  // ranges that reads took from a read-ahead

 private:
  struct Impl;
  struct Pass;
  std::unique_ptr<Impl> impl_;
};

}  // namespace zt::io
