// NVMe swap benchmark: on one path, the disk's raw sequential write and read rate with plain
// O_DIRECT pwrite/pread of large requests from several threads (the physical limit), beside the
// rate of io::SwapFile (src/zerotrain/io/swap_file.h) under the given aio settings, both on files
// in one swap directory under --path, measured in the same run; prints a table and JSON with the
// ratio swap/raw. Reads come from the disk, not the page cache: O_DIRECT, or, where the filesystem
// refuses it, the file's cached pages dropped before each read (said in the output). Writes are
// timed up to fdatasync. The data read back is compared with what was written.
//   build/bin/nvme_bench --path /mnt/nvme [--gib 4] [--block-size 1048576] [--queue-depth 8]
//                        [--threads 1] [--backend async_io|posix] [--single-submit]
//                        [--no-overlap-events] [--request-mib 256] [--raw-threads 4]
//                        [--raw-request-mib 16] [--reps 3] [--json out.json]
#include <fcntl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/bench_harness.h"
#include "zerotrain/core/error.h"
#include "zerotrain/core/io_error.h"
#include "zerotrain/io/aligned_host_buffer.h"
#include "zerotrain/io/swap_directory.h"
#include "zerotrain/io/swap_file.h"

namespace zt::bench {
namespace {

namespace fs = std::filesystem;
constexpr int64_t kMiB = 1 << 20;

double seconds_of(const std::function<void()>& fn) {
  const auto a = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Flushes `path` to the disk; with `drop_cache` also evicts its pages, so a buffered read that
// follows comes from the disk.
void sync_file(const fs::path& path, bool drop_cache) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw_errno("nvme_bench", "cannot open", path);
  const bool ok =
      ::fdatasync(fd) == 0 && (!drop_cache || ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0);
  ::close(fd);
  if (!ok) throw_errno("nvme_bench", "cannot flush", path);
}

// The raw rate: `threads` threads, each moving its contiguous slice of the file with synchronous
// O_DIRECT pwrite/pread of `request` bytes.
class RawFile {
 public:
  RawFile(const fs::path& path, int64_t bytes) : path_(path), bytes_(bytes) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) throw_errno("nvme_bench", "cannot create", path);
    const int rc = ::posix_fallocate(fd, 0, bytes);
    ::close(fd);
    if (rc != 0) {
      errno = rc;
      throw_errno("nvme_bench", "cannot reserve the raw file", path);
    }
    fd_ = ::open(path.c_str(), O_RDWR | O_DIRECT | O_CLOEXEC);
    direct_ = fd_ >= 0;
    if (!direct_) fd_ = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd_ < 0) throw_errno("nvme_bench", "cannot open", path);
  }
  ~RawFile() {
    ::close(fd_);
    ::unlink(path_.c_str());
  }
  bool direct() const { return direct_; }

  void transfer(bool write, std::byte* memory, int threads, int64_t request) {
    const int64_t slice = (bytes_ / threads + kMiB - 1) / kMiB * kMiB;
    std::vector<std::thread> pool;
    std::vector<int> errors(static_cast<size_t>(threads), 0);
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        const int64_t begin = std::min(bytes_, t * slice), end = std::min(bytes_, begin + slice);
        for (int64_t at = begin; at < end;) {
          const auto n = static_cast<size_t>(std::min(request, end - at));
          const ssize_t got =
              write ? ::pwrite(fd_, memory + at, n, at) : ::pread(fd_, memory + at, n, at);
          if (got <= 0) {
            errors[static_cast<size_t>(t)] = got < 0 ? errno : EIO;
            return;
          }
          at += got;
        }
      });
    for (auto& th : pool)
      th.join();
    for (int e : errors)
      if (e != 0) {
        errno = e;
        throw_errno("nvme_bench", write ? "raw write to" : "raw read from", path_);
      }
  }

 private:
  fs::path path_;
  int64_t bytes_;
  int fd_ = -1;
  bool direct_ = false;
};

void swap_transfer(io::SwapFile& file, bool write, std::byte* memory, int64_t request) {
  std::vector<io::SwapRequest> inflight;
  for (int64_t at = 0; at < file.bytes(); at += request) {
    const int64_t n = std::min(request, file.bytes() - at);
    inflight.push_back(write ? file.write(at, memory + at, n) : file.read(at, memory + at, n));
  }
  for (auto& r : inflight)
    r.wait();
}

int run(int argc, char** argv) {
  CLI::App app{
      "NVMe swap benchmark: SwapFile read/write GB/s against the disk's raw O_DIRECT rate"};
  std::string path, backend = "async_io", json_path, commit = ZT_GIT_COMMIT;
  double gib = 4;
  int64_t block_size = kMiB, queue_depth = 8, threads = 1, request_mib = 256, raw_request_mib = 16;
  int raw_threads = 4, reps = 3;
  bool single_submit = false, no_overlap = false;
  app.add_option("--path", path, "directory on the disk to measure (like nvme_path)")->required();
  app.add_option("--gib", gib, "bytes moved per measurement, in GiB");
  app.add_option("--block-size", block_size, "aio.block_size: bytes per request");
  app.add_option("--queue-depth", queue_depth, "aio.queue_depth: requests in flight per thread");
  app.add_option("--threads", threads, "aio.intra_op_parallelism: threads per read/write");
  app.add_option("--backend", backend, "aio.io_backend: async_io (io_uring) or posix");
  app.add_flag("--single-submit", single_submit, "aio.single_submit");
  app.add_flag("--no-overlap-events", no_overlap, "aio.overlap_events false");
  app.add_option("--request-mib", request_mib, "SwapFile request size, all in flight together");
  app.add_option("--raw-threads", raw_threads, "threads of the raw measurement");
  app.add_option("--raw-request-mib", raw_request_mib, "request size of the raw measurement");
  app.add_option("--reps", reps, "repetitions (median reported)");
  app.add_option("--json", json_path, "also write the JSON to this file");
  app.add_option("--commit", commit, "commit recorded in the JSON (default: the build's)");
  CLI11_PARSE(app, argc, argv);
  const auto bytes =
      static_cast<int64_t>(gib * 1073741824.0) / io::kSwapAlignment * io::kSwapAlignment;
  if (bytes <= 0 || reps < 1 || raw_threads < 1 || request_mib < 1 || raw_request_mib < 1)
    throw ValueError("nvme_bench", str("--gib ", gib, ", --reps ", reps, ", --raw-threads ",
                                       raw_threads, ": must be positive"));

  config::AioConfig aio;
  aio.io_backend = backend;
  aio.block_size = block_size;
  aio.queue_depth = queue_depth;
  aio.intra_op_parallelism = threads;
  aio.single_submit = single_submit;
  aio.overlap_events = !no_overlap;

  const io::SwapDirectory dir = io::SwapDirectory::create(path, 2 * bytes);
  io::AlignedHostBuffer source(bytes), back(bytes);
  for (int64_t i = 0; i < bytes; i += 8) {
    const uint64_t x = static_cast<uint64_t>(i) * 0x9E3779B97F4A7C15ull;
    std::memcpy(source.data() + i, &x, 8);
  }
  std::vector<double> raw_w, raw_r, swap_w, swap_r;
  bool raw_direct = false, swap_direct = false, same = true;
  std::string swap_backend;
  for (int rep = 0; rep < reps; ++rep) {
    {
      RawFile raw(dir.path() / "raw.bin", bytes);
      raw_direct = raw.direct();
      raw_w.push_back(seconds_of([&] {
        raw.transfer(true, source.data(), raw_threads, raw_request_mib * kMiB);
        sync_file(dir.path() / "raw.bin", !raw.direct());
      }));
      raw_r.push_back(seconds_of(
          [&] { raw.transfer(false, back.data(), raw_threads, raw_request_mib * kMiB); }));
      same = same && std::memcmp(source.data(), back.data(), static_cast<size_t>(bytes)) == 0;
    }
    std::memset(back.data(), 0, static_cast<size_t>(bytes));
    {
      io::SwapFile file(dir, "swap.bin", bytes, aio);
      swap_direct = file.direct();
      swap_backend = file.backend();
      swap_w.push_back(seconds_of([&] {
        swap_transfer(file, true, source.data(), request_mib * kMiB);
        sync_file(file.path(), !file.direct());
      }));
      swap_r.push_back(
          seconds_of([&] { swap_transfer(file, false, back.data(), request_mib * kMiB); }));
      same = same && std::memcmp(source.data(), back.data(), static_cast<size_t>(bytes)) == 0;
    }
  }
  const double b = static_cast<double>(bytes);
  const double rw = b / median(raw_w) / 1e9, rr = b / median(raw_r) / 1e9;
  const double sw = b / median(swap_w) / 1e9, sr = b / median(swap_r) / 1e9;
  const std::string raw_what = str("raw (", raw_direct ? "O_DIRECT" : "buffered", ", ", raw_threads,
                                   " threads x ", raw_request_mib, " MiB)");
  const std::string swap_what =
      str("SwapFile (", swap_backend, ", ", swap_direct ? "O_DIRECT" : "buffered", ", block ",
          block_size, ", depth ", queue_depth, ", ", threads, " threads)");
  std::printf("%-66s %10s %10s\n", "what", "write GB/s", "read GB/s");
  std::printf("%-66s %10.2f %10.2f\n", raw_what.c_str(), rw, rr);
  std::printf("%-66s %10.2f %10.2f\n", swap_what.c_str(), sw, sr);
  std::printf("%-66s %10.3f %10.3f\n", "ratio SwapFile / raw", sw / rw, sr / rr);
  if (!swap_direct || !raw_direct)
    std::printf("note: %s refuses O_DIRECT: buffered I/O, the file's pages dropped before reads\n",
                path.c_str());
  if (!same) std::printf("error: the data read back differs from the data written\n");

  nlohmann::json j = {{"bench", "nvme_bench"},
                      {"commit", commit},
                      {"path", path},
                      {"bytes", bytes},
                      {"reps", reps},
                      {"host_threads", std::thread::hardware_concurrency()},
                      {"data_read_back_equal", same},
                      {"raw",
                       {{"direct", raw_direct},
                        {"threads", raw_threads},
                        {"request_bytes", raw_request_mib * kMiB},
                        {"write_gbps", rw},
                        {"read_gbps", rr}}},
                      {"swap",
                       {{"direct", swap_direct},
                        {"backend", swap_backend},
                        {"aio",
                         {{"io_backend", backend},
                          {"block_size", block_size},
                          {"queue_depth", queue_depth},
                          {"intra_op_parallelism", threads},
                          {"single_submit", single_submit},
                          {"overlap_events", !no_overlap}}},
                        {"request_bytes", request_mib * kMiB},
                        {"write_gbps", sw},
                        {"read_gbps", sr}}},
                      {"ratio", {{"write", sw / rw}, {"read", sr / rr}}}};
  if (!swap_direct || !raw_direct)
    j["note"] = "O_DIRECT refused: buffered I/O with the file's pages dropped before reads";
  std::printf("%s\n", j.dump().c_str());
  if (!json_path.empty()) std::ofstream(json_path) << j.dump(2) << "\n";
  return same ? 0 : 1;
}

}  // namespace
}  // namespace zt::bench

int main(int argc, char** argv) {
  return zt::bench::run_main(zt::bench::run, argc, argv);
}
