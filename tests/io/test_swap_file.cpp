// SwapFile (src/zerotrain/io/swap_file.h): random bytes round-trip at aligned and unaligned
// offsets, lengths and pointers, with many requests in flight, under both backends and every
// AioConfig knob; O_DIRECT where the filesystem has it and the buffered fallback (tmpfs) with its
// warning; io_uring refused by a seccomp filter (the posix fallback and its warning); errors: a
// range outside the file, a write past the file-size limit (a full disk: one line, under both
// backends), a reservation past it; counters; the file removed with the object.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "io/child_process.h"
#include "io/seccomp_refusals.h"
#include "io/io_test_util.h"
#include "support/file_size_limit.h"
#include "zerotrain/core/io_error.h"
#include "zerotrain/io/swap_directory.h"
#include "zerotrain/io/swap_file.h"
#include "zerotrain/io/swap_io_worker.h"

namespace zt::config {
// How the parameterized tests print an AioConfig.
void PrintTo(const AioConfig& a, std::ostream* os) {
  *os << a.io_backend << " block_size " << a.block_size << " queue_depth " << a.queue_depth
      << " threads " << a.intra_op_parallelism << " single_submit " << a.single_submit
      << " overlap_events " << a.overlap_events;
}
}  // namespace zt::config

namespace zt::io {
namespace {

namespace fs = std::filesystem;
using test::ChildProcess;
using test::refuse_io_uring;
using test::refuse_o_direct;
using test::report_line;
using test::TempDir;

constexpr int64_t kMiB = 1 << 20;

std::vector<std::byte> random_bytes(int64_t n, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::vector<std::byte> v(static_cast<size_t>(n));
  for (auto& b : v)
    b = static_cast<std::byte>(gen() & 0xff);
  return v;
}

bool io_uring_allowed() {
  int error = 0;
  return detail::open_io_ring(1, &error) != nullptr;
}

config::AioConfig aio(const std::string& backend, int64_t block, int64_t depth, int64_t threads,
                      bool single_submit = false, bool overlap = true) {
  config::AioConfig a;
  a.io_backend = backend;
  a.block_size = block;
  a.queue_depth = depth;
  a.intra_op_parallelism = threads;
  a.single_submit = single_submit;
  a.overlap_events = overlap;
  return a;
}

std::string describe(const config::AioConfig& a) {
  return str(a.io_backend, "_block", a.block_size, "_depth", a.queue_depth, "_threads",
             a.intra_op_parallelism, a.single_submit ? "_single" : "",
             a.overlap_events ? "" : "_nooverlap");
}

// Every knob value: block_size below the transfer, equal to one block, not a multiple of 4096
// and larger than the transfers; queue_depth 1 and 8; 1 and 4 threads; single_submit; both event
// habits; both backends.
std::vector<config::AioConfig> knob_settings() {
  std::vector<config::AioConfig> out;
  for (const std::string backend : {"async_io", "posix"}) {
    out.push_back(aio(backend, kMiB, 8, 1));
    out.push_back(aio(backend, 8192, 1, 1));
    out.push_back(aio(backend, 4096, 8, 4));
    out.push_back(aio(backend, 1000, 4, 4));
    out.push_back(aio(backend, 64 * kMiB, 2, 1));
    out.push_back(aio(backend, 16384, 8, 1, true));
    out.push_back(aio(backend, 16384, 8, 4, false, false));
    out.push_back(aio(backend, 12288, 3, 4, true, false));
  }
  return out;
}

// The file's expected content, kept beside it: each write lands here too.
class CheckedSwap {
 public:
  CheckedSwap(SwapFile& file) : file_(file), model_(static_cast<size_t>(file.bytes())) {}

  void write_now(int64_t offset, const std::byte* src, int64_t n) {
    file_.write(offset, src, n).wait();
    std::copy_n(src, n, model_.data() + offset);
  }
  // Reads [offset, offset + n) into memory at `misalign` bytes past a 4096 boundary.
  void expect_reads_back(int64_t offset, int64_t n, int64_t misalign) {
    AlignedHostBuffer buf(n + misalign + 64);
    std::byte* dst = buf.data() + misalign;
    std::memset(dst, 0xAB, static_cast<size_t>(n));
    file_.read(offset, dst, n).wait();
    EXPECT_EQ(std::memcmp(dst, model_.data() + offset, static_cast<size_t>(n)), 0)
        << "read of " << n << " bytes at offset " << offset << ", memory misaligned by "
        << misalign;
    for (int64_t i = 0; i < 64; ++i)
      ASSERT_EQ(dst[n + i], std::byte{0}) << "read wrote past its end";
  }
  std::vector<std::byte>& model() { return model_; }

 private:
  SwapFile& file_;
  std::vector<std::byte> model_;
};

class SwapFileKnobs : public ::testing::TestWithParam<config::AioConfig> {};

TEST_P(SwapFileKnobs, RoundTripsAlignedAndUnaligned) {
  const config::AioConfig& a = GetParam();
  TempDir nvme;
  const SwapDirectory dir = SwapDirectory::create(nvme.path().string(), 4 * kMiB);
  const int64_t size = 3 * kMiB + 123;  // not a whole number of blocks
  SwapFile file(dir, "state.swap", size, a);
  EXPECT_EQ(file.bytes(), size);
  EXPECT_EQ(file.path(), dir.path() / "state.swap");
  EXPECT_EQ(std::string(file.backend()),
            a.io_backend == "posix" || !io_uring_allowed() ? "posix" : "io_uring");
  CheckedSwap check(file);

  // The whole file from aligned memory, then read back whole and in pieces.
  AlignedHostBuffer whole(size);
  const auto data = random_bytes(size, 1);
  std::memcpy(whole.data(), data.data(), static_cast<size_t>(size));
  check.write_now(0, whole.data(), size);
  check.expect_reads_back(0, size, 0);
  check.expect_reads_back(0, size, 1);

  // Unaligned offsets, lengths and pointers, including the file's partial last block.
  const std::vector<std::pair<int64_t, int64_t>> ranges = {
      {0, 1},       {1, 4095},     {4095, 2},     {4096, 4096},        {4097, 12345},
      {8192, kMiB}, {7, kMiB + 9}, {size - 1, 1}, {size - 5000, 5000}, {kMiB - 3, 2 * kMiB + 3},
      {0, 0},       {size, 0}};
  uint64_t seed = 2;
  for (const auto& [offset, n] : ranges) {
    for (const int64_t misalign : {int64_t{0}, int64_t{1}, int64_t{4000}}) {
      AlignedHostBuffer buf(n + misalign);
      const auto bytes = random_bytes(n, seed++);
      std::copy(bytes.begin(), bytes.end(), buf.data() + misalign);
      check.write_now(offset, buf.data() + misalign, n);
      check.expect_reads_back(offset, n, misalign);
      check.expect_reads_back(offset, n, (misalign + 3) % 4096);
    }
  }
  check.expect_reads_back(0, size, 0);
}

TEST_P(SwapFileKnobs, ManyRequestsInFlight) {
  const config::AioConfig& a = GetParam();
  TempDir nvme;
  const SwapDirectory dir = SwapDirectory::create(nvme.path().string(), 4 * kMiB);
  const int64_t size = 2 * kMiB + 4096 * 3 + 17;
  SwapFile file(dir, "params.swap", size, a);
  const auto data = random_bytes(size, 7);
  // 40 adjacent writes of uneven sizes, most of them sharing a 4096-byte block with a neighbour,
  // all in flight together; then 40 reads of other pieces, all in flight together.
  std::vector<int64_t> cuts = {0};
  std::mt19937_64 gen(3);
  while (cuts.back() < size)
    cuts.push_back(std::min(size, cuts.back() + 1 + static_cast<int64_t>(gen() % 110000)));
  std::vector<SwapRequest> writes;
  for (size_t i = 0; i + 1 < cuts.size(); ++i)
    writes.push_back(file.write(cuts[i], data.data() + cuts[i], cuts[i + 1] - cuts[i]));
  for (auto& w : writes)
    w.wait();
  EXPECT_EQ(file.bytes_written(), size);

  // Into memory aligned (bounce-free where the file offsets are) and 1 byte off the grid.
  for (const int64_t misalign : {int64_t{0}, int64_t{1}}) {
    AlignedHostBuffer buf(size + misalign);
    std::byte* back = buf.data() + misalign;
    std::vector<SwapRequest> reads;
    for (int64_t at = 0; at < size;) {
      const int64_t n = std::min(size - at, 1 + static_cast<int64_t>(gen() % 130000));
      reads.push_back(file.read(at, back + at, n));
      at += n;
    }
    EXPECT_GT(reads.size(), 10u);
    for (auto& r : reads)
      r.wait();
    EXPECT_EQ(std::memcmp(back, data.data(), static_cast<size_t>(size)), 0) << misalign;
  }
  EXPECT_EQ(file.bytes_read(), 2 * size);
}

INSTANTIATE_TEST_SUITE_P(Aio, SwapFileKnobs, ::testing::ValuesIn(knob_settings()),
                         [](const auto& p) { return describe(p.param); });

TEST(SwapFile, DirectOnADiskAndCountsBytes) {
  TempDir nvme;
  const SwapDirectory dir = SwapDirectory::create(nvme.path().string(), kMiB);
  SwapFile file(dir, "a.swap", kMiB, config::AioConfig{});
  if (!file.direct()) GTEST_SKIP() << nvme.path() << " refuses O_DIRECT";
  AlignedHostBuffer buf(kMiB);
  file.write(0, buf.data(), kMiB).wait();
  file.read(4096, buf.data(), 8192).wait();
  file.read(1, buf.data(), 10).wait();
  EXPECT_EQ(file.bytes_written(), kMiB);
  EXPECT_EQ(file.bytes_read(), 8192 + 10);
}

// Round trips through `file` with unaligned pieces; "equal" when all read back.
std::string round_trip(SwapFile& file) {
  const int64_t n = file.bytes();
  const auto data = random_bytes(n, 9);
  file.write(0, data.data(), n).wait();
  file.write(3, data.data() + 100, 5000).wait();
  auto expected = data;
  std::memcpy(expected.data() + 3, data.data() + 100, 5000);
  std::vector<std::byte> back(static_cast<size_t>(n) + 1);
  file.read(0, back.data() + 1, n).wait();
  return std::memcmp(back.data() + 1, expected.data(), static_cast<size_t>(n)) == 0 ? "equal"
                                                                                    : "differ";
}

TEST(SwapFile, RefusedODirectFallsBackToBufferedSayingSo) {
  TempDir nvme;
  ChildProcess child([&](int report) {
    if (!refuse_o_direct()) return report_line(report, "no seccomp");
    ::dup2(report, STDERR_FILENO);
    const SwapDirectory dir = SwapDirectory::create(nvme.path().string(), 4 * kMiB);
    report_line(report, dir.path().string());
    SwapFile file(dir, "a.swap", kMiB + 5, aio("async_io", 65536, 4, 2));
    SwapFile second(dir, "b.swap", 4096, config::AioConfig{});  // no second warning
    report_line(report, str("direct ", file.direct(), second.direct(), " ", round_trip(file)));
  });
  const std::string dir = child.read_line();
  const std::string out = child.read_all();
  EXPECT_EQ(child.wait(), 0);
  if (dir == "no seccomp") GTEST_SKIP() << "seccomp filters are not permitted here";
  EXPECT_EQ(out, "[offload] warning: the filesystem of " + dir +
                     " refuses O_DIRECT (Invalid argument; tmpfs does): its swap files use "
                     "buffered I/O through the page cache\n"
                     "direct 00 equal\n");
}

// tmpfs refuses O_DIRECT before Linux 6.6 and takes it since: either way the file works, and the
// warning comes exactly when O_DIRECT was refused.
TEST(SwapFile, WorksOnTmpfs) {
  if (!fs::is_directory("/dev/shm")) GTEST_SKIP() << "no /dev/shm";
  const fs::path shm = fs::path("/dev/shm") / ("zt_swap_test_" + std::to_string(::getpid()));
  fs::create_directories(shm);
  {
    const SwapDirectory dir = SwapDirectory::create(shm.string(), kMiB);
    ::testing::internal::CaptureStderr();
    SwapFile file(dir, "a.swap", kMiB + 5, aio("async_io", 65536, 4, 2));
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(err.find("refuses O_DIRECT") != std::string::npos, !file.direct()) << err;
    EXPECT_EQ(round_trip(file), "equal");
  }
  fs::remove_all(shm);
}

TEST(SwapFile, DestructorRemovesTheFileAndWaits) {
  TempDir nvme;
  const SwapDirectory dir = SwapDirectory::create(nvme.path().string(), 8 * kMiB);
  const auto data = random_bytes(8 * kMiB, 4);
  {
    SwapFile file(dir, "a.swap", 8 * kMiB, aio("async_io", 65536, 2, 2));
    SwapRequest pending = file.write(0, data.data(), 8 * kMiB);  // waited for by ~SwapRequest
    EXPECT_TRUE(fs::exists(dir.path() / "a.swap"));
  }
  EXPECT_FALSE(fs::exists(dir.path() / "a.swap"));
  EXPECT_TRUE(fs::exists(dir.path()));
}

TEST(SwapFile, MovesKeepTheFileAndRequests) {
  TempDir nvme;
  const SwapDirectory dir = SwapDirectory::create(nvme.path().string(), kMiB);
  std::vector<SwapFile> files;
  for (int i = 0; i < 3; ++i)
    files.emplace_back(dir, "f" + std::to_string(i), 10000, config::AioConfig{});
  const auto data = random_bytes(10000, 5);
  SwapRequest w = files[2].write(0, data.data(), 10000);
  SwapRequest moved = std::move(w);
  EXPECT_TRUE(w.done());
  moved.wait();
  std::vector<std::byte> back(10000);
  files[2].read(0, back.data(), 10000).wait();
  EXPECT_TRUE(back == data);
  EXPECT_TRUE(SwapRequest().done());
}

TEST(SwapFile, RangeOutsideTheFileIsRefused) {
  TempDir nvme;
  const SwapDirectory dir = SwapDirectory::create(nvme.path().string(), kMiB);
  SwapFile file(dir, "a.swap", 4096, config::AioConfig{});
  std::vector<std::byte> buf(8192);
  const std::string where = (dir.path() / "a.swap").string();
  test::expect_error<ValueError>([&] { file.read(4000, buf.data(), 100); },
                                 {"[offload] read of 100 bytes at offset 4000 of " + where +
                                  " is outside the file (4096 bytes)"});
  test::expect_error<ValueError>([&] { file.write(-1, buf.data(), 1); },
                                 {"write of 1 bytes at offset -1"});
  test::expect_error<ValueError>([&] { file.read(0, nullptr, 1); }, {"with a null buffer"});
  EXPECT_TRUE(file.read(4096, buf.data(), 0).done());
}

TEST(SwapFile, AioValuesItCannotHonourAreRefused) {
  TempDir nvme;
  const SwapDirectory dir = SwapDirectory::create(nvme.path().string(), kMiB);
  auto bad = [&](config::AioConfig a, const std::string& part) {
    test::expect_error<ValueError>([&] { SwapFile(dir, "x", 4096, a); }, {"[offload] " + part});
  };
  bad(aio("async_io", 0, 8, 1), "aio.block_size 0: must be >= 1");
  bad(aio("async_io", 4096, 0, 1), "aio.queue_depth 0: must be >= 1");
  bad(aio("async_io", 4096, 8, 0), "aio.intra_op_parallelism 0: must be >= 1");
  bad(aio("libaio", 4096, 8, 1), "aio.io_backend \"libaio\": expected async_io or posix");
  config::AioConfig gds;
  gds.use_gds = true;
  bad(gds, "aio.use_gds true");
  EXPECT_FALSE(fs::exists(dir.path() / "x"));
}

using test::FileSizeLimit;

class SwapFileBackends : public ::testing::TestWithParam<std::string> {};

TEST_P(SwapFileBackends, WritePastTheLimitIsOneLine) {
  TempDir nvme;
  const SwapDirectory dir = SwapDirectory::create(nvme.path().string(), 4 * kMiB);
  SwapFile file(dir, "a.swap", 4 * kMiB, aio(GetParam(), 65536, 4, 2));
  const auto data = random_bytes(2 * kMiB, 6);
  const std::string where = (dir.path() / "a.swap").string();
  FileSizeLimit limit(kMiB);
  ASSERT_TRUE(limit.ok());
  file.write(0, data.data(), kMiB).wait();  // below the limit: fine
  SwapRequest past = file.write(3 * kMiB, data.data(), kMiB);
  test::expect_error<IoError>(
      [&] { past.wait(); },
      {"[offload] write of 1048576 bytes at offset 3145728 of " + where + " failed at offset ",
       ": File too large (the process's file-size limit, ulimit -f, is "
       "reached)"});
  // Across the limit, from unaligned memory and offset: also a clear failure, never a silent one.
  SwapRequest across = file.write(kMiB - 10000, data.data() + 1, 50000);
  test::expect_error<IoError>([&] { across.wait(); }, {"failed at offset ", "File too large"});
  EXPECT_EQ(file.bytes_written(), kMiB);
  // A failure nobody waited for is still printed.
  ::testing::internal::CaptureStderr();
  { SwapRequest dropped = file.write(2 * kMiB, data.data(), 4096); }
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("[offload] write of 4096 bytes at offset 2097152"), std::string::npos) << err;
  EXPECT_NE(err.find("(a request nobody waited for)"), std::string::npos) << err;
}

TEST_P(SwapFileBackends, ReservationPastTheLimitIsOneLine) {
  TempDir nvme;
  const SwapDirectory dir = SwapDirectory::create(nvme.path().string(), 4 * kMiB);
  FileSizeLimit limit(kMiB);
  ASSERT_TRUE(limit.ok());
  const std::string where = (dir.path() / "a.swap").string();
  test::expect_error<IoError>(
      [&] { SwapFile(dir, "a.swap", 4 * kMiB, aio(GetParam(), 65536, 4, 1)); },
      {"[offload] cannot reserve 4.0 MiB (4194304 bytes) for swap file " + where +
       ": File too large"});
  EXPECT_FALSE(fs::exists(where));
}

INSTANTIATE_TEST_SUITE_P(Backends, SwapFileBackends, ::testing::Values("async_io", "posix"));

TEST(SwapFile, RefusedIoUringFallsBackToPosixSayingSo) {
  TempDir nvme;
  ChildProcess child([&](int report) {
    if (!refuse_io_uring()) return report_line(report, "no seccomp");
    ::dup2(report, STDERR_FILENO);  // the warning goes to the parent too
    const SwapDirectory dir = SwapDirectory::create(nvme.path().string(), kMiB);
    SwapFile file(dir, "a.swap", 100000, aio("async_io", 8192, 4, 3));
    SwapFile second(dir, "b.swap", 100000, aio("async_io", 8192, 4, 3));
    const auto data = random_bytes(100000, 8);
    file.write(0, data.data(), 100000).wait();
    std::vector<std::byte> back(100000);
    file.read(0, back.data(), 100000).wait();
    report_line(report, str("backend ", file.backend(), " ", second.backend(),
                            back == data ? " equal" : " differ"));
  });
  const std::string out = child.read_all();
  EXPECT_EQ(child.wait(), 0);
  if (out == "no seccomp\n") GTEST_SKIP() << "seccomp filters are not permitted here";
  EXPECT_TRUE(out.ends_with("backend posix posix equal\n")) << out;
  // Where this process has io_uring, the warning is the child's first (it is printed once).
  if (io_uring_allowed()) {
    EXPECT_EQ(
        out,
        "[offload] warning: io_uring is refused here (io_uring_queue_init: Operation not "
        "permitted; the kernel or a container's seccomp profile forbids it): swap I/O uses the "
        "posix backend, pread/pwrite in 3 thread(s)\n"
        "backend posix posix equal\n");
  }
}

TEST(AlignedHostBuffer, AlignedZeroedAndMovable) {
  AlignedHostBuffer a(10000);
  EXPECT_TRUE(is_swap_aligned(a.data()));
  EXPECT_EQ(a.bytes(), 10000);
  for (int64_t i = 0; i < 12288; ++i)
    ASSERT_EQ(a.data()[i], std::byte{0});
  std::byte* p = a.data();
  AlignedHostBuffer b = std::move(a);
  EXPECT_EQ(b.data(), p);
  EXPECT_EQ(a.data(), nullptr);
  EXPECT_EQ(AlignedHostBuffer(0).data(), nullptr);
  EXPECT_THROW(AlignedHostBuffer(-1), ValueError);
}

}  // namespace
}  // namespace zt::io
