// DirectFileReader (src/zerotrain/io/direct_file_reader.h): ranges of files of sizes around the
// 4096-byte grid and the buffer size read back equal to the bytes on disk with zlib's CRC-32, with
// O_DIRECT and through the page cache (forced, refused by a seccomp filter with its one warning,
// and tmpfs); a file truncated while read, ranges out of order or past the file, a sink that
// throws. Read-ahead: announced ranges in a jumbled order read back equal, one by one or several at
// once; a flipped byte changes the checksum of the range that holds it only; a read back or past
// the next announced range ends the read-ahead and reads directly; a failed read-ahead request is
// reported only by the read that asks for its bytes.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "io/child_process.h"
#include "io/io_test_util.h"
#include "io/seccomp_refusals.h"
#include "zerotrain/core/error.h"
#include "zerotrain/core/io_error.h"
#include "zerotrain/io/direct_file_reader.h"

namespace zt::io {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

constexpr int64_t kBuffer = 3 * 4096;

std::string random_text(int64_t n, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::string s(static_cast<size_t>(n), '\0');
  for (char& c : s)
    c = static_cast<char>(gen() & 0xff);
  return s;
}

uint32_t crc_of(const std::string& s) {
  return static_cast<uint32_t>(
      crc32_z(0, reinterpret_cast<const Bytef*>(s.data()), static_cast<z_size_t>(s.size())));
}

// Reads `ranges` of `file`; each range's bytes as the sink saw them, in order, and its CRC.
struct Got {
  std::vector<std::string> bytes;
  std::vector<uint32_t> crcs;
};
Got read_ranges(DirectFileReader& reader, const DirectReadFile& file,
                const std::vector<ByteRange>& ranges) {
  Got got;
  got.bytes.resize(ranges.size());
  got.crcs =
      reader.read(file, ranges, [&](size_t r, int64_t offset, const std::byte* data, int64_t n) {
        std::string& out = got.bytes[r];
        EXPECT_EQ(offset, static_cast<int64_t>(out.size())) << "pieces out of order";
        out.append(reinterpret_cast<const char*>(data), static_cast<size_t>(n));
      });
  return got;
}

// Every range of `ranges` read from a file holding `content` equals its bytes, and its CRC zlib's.
void expect_ranges_read_back(DirectFileReader& reader, const DirectReadFile& file,
                             const std::string& content, const std::vector<ByteRange>& ranges) {
  const Got got = read_ranges(reader, file, ranges);
  for (size_t r = 0; r < ranges.size(); ++r) {
    const std::string want = content.substr(static_cast<size_t>(ranges[r].begin),
                                            static_cast<size_t>(ranges[r].end - ranges[r].begin));
    EXPECT_TRUE(got.bytes[r] == want) << "range [" << ranges[r].begin << ", " << ranges[r].end
                                      << ") of " << content.size() << " bytes";
    EXPECT_EQ(got.crcs[r], crc_of(want)) << "range " << r;
  }
}

// The same with the sink on the reader threads: each piece written at its place, in any order.
void expect_ranges_read_back_on_readers(DirectFileReader& reader, const DirectReadFile& file,
                                        const std::string& content,
                                        const std::vector<ByteRange>& ranges) {
  std::vector<std::string> got(ranges.size());
  for (size_t r = 0; r < ranges.size(); ++r)
    got[r].assign(static_cast<size_t>(ranges[r].end - ranges[r].begin), '\0');
  const std::vector<uint32_t> crcs = reader.read(
      file, ranges,
      [&](size_t r, int64_t offset, const std::byte* data, int64_t n) {
        std::memcpy(got[r].data() + offset, data, static_cast<size_t>(n));
      },
      SinkOn::reader_threads);
  for (size_t r = 0; r < ranges.size(); ++r) {
    const std::string want = content.substr(static_cast<size_t>(ranges[r].begin),
                                            static_cast<size_t>(ranges[r].end - ranges[r].begin));
    EXPECT_TRUE(got[r] == want) << "range [" << ranges[r].begin << ", " << ranges[r].end << ")";
    EXPECT_EQ(crcs[r], crc_of(want)) << "range " << r;
  }
}

// Sizes around the 4096-byte grid and the buffer size, and several buffers.
const std::vector<int64_t>& file_sizes() {
  static const std::vector<int64_t> sizes{
      1, 4095, 4096, 4097, kBuffer - 1, kBuffer, kBuffer + 1, 2 * kBuffer + 4095, 5 * kBuffer + 7};
  return sizes;
}

class DirectFileReaderModes : public ::testing::TestWithParam<bool> {};

TEST_P(DirectFileReaderModes, RangesReadBackEqualToTheBytesOnDisk) {
  const bool buffered = GetParam();
  TempDir dir;
  for (const int buffers : {1, 2, 3}) {
    DirectFileReader reader({kBuffer, buffers, buffered});
    EXPECT_EQ(reader.buffer_bytes(), kBuffer);
    for (const int64_t size : file_sizes()) {
      const std::string content = random_text(size, static_cast<uint64_t>(size));
      const fs::path path = dir / ("f" + std::to_string(size));
      test::write_bytes(path, content);
      DirectReadFile file(path, buffered, "test");
      EXPECT_EQ(file.size(), size);
      if (buffered) {
        EXPECT_FALSE(file.direct());
      }
      expect_ranges_read_back(reader, file, content, {{0, size}});
      expect_ranges_read_back(reader, file, content, {{size, size}});
      // Heads and tails off the grid, ranges that share a block or a buffer, gaps between them.
      std::vector<ByteRange> several;
      for (const ByteRange r : std::vector<ByteRange>{
               {0, 1}, {2, 4095}, {4095, 4097}, {4098, kBuffer - 1}, {kBuffer + 1, size}})
        if (r.end <= size && r.begin <= r.end) several.push_back(r);
      expect_ranges_read_back(reader, file, content, several);
      expect_ranges_read_back_on_readers(reader, file, content, several);
      expect_ranges_read_back(reader, file, content, {{size - 1, size}});
      if (size > 2) {
        expect_ranges_read_back(reader, file, content, {{1, size - 1}});
      }
    }
  }
}

TEST_P(DirectFileReaderModes, AFileTruncatedWhileReadIsOneLineNamingIt) {
  const bool buffered = GetParam();
  TempDir dir;
  const fs::path path = dir / "f";
  const int64_t size = 4 * kBuffer + 100;
  test::write_bytes(path, random_text(size, 1));
  DirectReadFile file(path, buffered, "test");
  fs::resize_file(path, static_cast<uintmax_t>(kBuffer + 5));
  DirectFileReader reader({kBuffer, 2, buffered});
  test::expect_error<FormatError>(
      [&] {
        reader.read(file, {{0, size}});
      },
      {"[test]", path.string(), "the file ends at byte", "truncated while read"});
  // The reader is still usable.
  fs::resize_file(path, static_cast<uintmax_t>(size));
  EXPECT_EQ(reader.read(file, {{0, 10}}).size(), 1u);
}

TEST_P(DirectFileReaderModes, RangesOutOfOrderOrPastTheFileAreRefused) {
  const bool buffered = GetParam();
  TempDir dir;
  const fs::path path = dir / "f";
  test::write_bytes(path, random_text(5000, 2));
  DirectReadFile file(path, buffered, "test");
  DirectFileReader reader({kBuffer, 2, buffered});
  test::expect_error<ValueError>(
      [&] {
        reader.read(file, {{0, 5001}});
      },
      {path.string(), "[0, 5001)", "outside the file (5000 bytes)"});
  test::expect_error<ValueError>(
      [&] {
        reader.read(file, {{10, 20}, {15, 30}});
      },
      {"[15, 30)", "out of order"});
  test::expect_error<ValueError>([&] { reader.read(file, {{10, 5}}); }, {"[10, 5)"});
}

TEST_P(DirectFileReaderModes, ASinkThatThrowsStopsTheReadAndLeavesTheReaderUsable) {
  const bool buffered = GetParam();
  TempDir dir;
  const fs::path path = dir / "f";
  const std::string content = random_text(8 * kBuffer, 3);
  test::write_bytes(path, content);
  DirectReadFile file(path, buffered, "test");
  DirectFileReader reader({kBuffer, 3, buffered});
  int calls = 0;
  test::expect_error<ValueError>(
      [&] {
        reader.read(file, {{0, 8 * kBuffer}}, [&](size_t, int64_t, const std::byte*, int64_t) {
          if (++calls == 2) throw ValueError("sink", "stop");
        });
      },
      {"[sink] stop"});
  EXPECT_EQ(calls, 2);
  expect_ranges_read_back(reader, file, content, {{7, 8 * kBuffer - 7}});
}

// With the default buffers, a read of a few MiB is cut into one request per buffer, off the
// buffers' own grid.
TEST_P(DirectFileReaderModes, ReadsSmallerThanTheBuffersAreSplitAndReadBackEqual) {
  const bool buffered = GetParam();
  TempDir dir;
  const int64_t size = 5 * (int64_t{1} << 20) + 4097;
  const std::string content = random_text(size, 8);
  test::write_bytes(dir / "f", content);
  DirectReadFile file(dir / "f", buffered, "test");
  DirectFileReader reader({int64_t{16} << 20, 4, buffered});
  expect_ranges_read_back(reader, file, content, {{0, size}});
  expect_ranges_read_back(reader, file, content, {{3, size - 5}});
  expect_ranges_read_back(reader, file, content, {{1, 3}, {4096, 3 << 20}, {(3 << 20) + 1, size}});
  expect_ranges_read_back_on_readers(reader, file, content,
                                     {{1, 3}, {4096, 3 << 20}, {(3 << 20) + 1, size}});
}

// Ranges of a file of 5 * kBuffer + 7 bytes in a jumbled order: back and forth, two that follow
// each other in the file and share a block, an empty one, one in the file's partial last block.
std::vector<ByteRange> jumbled_ranges() {
  const int64_t size = 5 * kBuffer + 7;
  return {{3 * kBuffer + 5, 4 * kBuffer},
          {4 * kBuffer, 4 * kBuffer + 9000},
          {1, 4095},
          {4095, kBuffer + 3},
          {2 * kBuffer, 2 * kBuffer},
          {size - 3, size},
          {kBuffer + 3, 3 * kBuffer + 5},
          {0, 1}};
}

TEST_P(DirectFileReaderModes, ReadAheadHandsBackTheAnnouncedRangesInTheirOrder) {
  const bool buffered = GetParam();
  TempDir dir;
  const std::string content = random_text(5 * kBuffer + 7, 11);
  test::write_bytes(dir / "f", content);
  DirectReadFile file(dir / "f", buffered, "test");
  const std::vector<ByteRange> ranges = jumbled_ranges();
  for (const int buffers : {1, 2, 3}) {
    DirectFileReader reader({kBuffer, buffers, buffered});
    reader.read_ahead(file, ranges);
    for (size_t i = 0; i < ranges.size(); ++i) {
      expect_ranges_read_back(reader, file, content, {ranges[i]});
      EXPECT_EQ(reader.ranges_read_ahead(), i + 1) << buffers << " buffers, range " << i;
    }
    // Every announced range taken: the next read is direct.
    expect_ranges_read_back(reader, file, content, {ranges[0]});
    EXPECT_EQ(reader.ranges_read_ahead(), ranges.size());
    // Several ranges taken at once by one ascending read.
    reader.read_ahead(file, {{0, 10}, {10, 5000}, {kBuffer, 2 * kBuffer}, {1, 2}});
    expect_ranges_read_back(reader, file, content, {{0, 10}, {10, 5000}, {kBuffer, 2 * kBuffer}});
    expect_ranges_read_back(reader, file, content, {{1, 2}});
    EXPECT_EQ(reader.ranges_read_ahead(), ranges.size() + 4);
  }
}

TEST_P(DirectFileReaderModes, AFlippedByteChangesOnlyTheChecksumOfTheRangeReadAheadThatHoldsIt) {
  const bool buffered = GetParam();
  TempDir dir;
  std::string content = random_text(5 * kBuffer + 7, 12);
  const std::vector<ByteRange> ranges = jumbled_ranges();
  std::vector<uint32_t> pristine;
  for (const ByteRange& r : ranges)
    pristine.push_back(
        crc_of(content.substr(static_cast<size_t>(r.begin), static_cast<size_t>(r.end - r.begin))));
  const size_t flipped = 6;  // a range whose bytes span several buffers, read after a jump back
  content[static_cast<size_t>(ranges[flipped].begin + kBuffer)] ^= 0x10;
  test::write_bytes(dir / "f", content);
  DirectReadFile file(dir / "f", buffered, "test");
  DirectFileReader reader({kBuffer, 2, buffered});
  reader.read_ahead(file, ranges);
  for (size_t i = 0; i < ranges.size(); ++i) {
    const Got got = read_ranges(reader, file, {ranges[i]});
    if (i == flipped)
      EXPECT_NE(got.crcs[0], pristine[i]);
    else
      EXPECT_EQ(got.crcs[0], pristine[i]) << "range " << i;
  }
  EXPECT_EQ(reader.ranges_read_ahead(), ranges.size());
  // Read again directly, after a jump back: the same checksums.
  reader.read_ahead(file, ranges);
  EXPECT_EQ(read_ranges(reader, file, {ranges[0]}).crcs[0], pristine[0]);
  EXPECT_NE(read_ranges(reader, file, {ranges[flipped]}).crcs[0], pristine[flipped]);
  EXPECT_EQ(read_ranges(reader, file, {ranges[2]}).crcs[0], pristine[2]);
  EXPECT_EQ(reader.ranges_read_ahead(), ranges.size() + 1);
}

TEST_P(DirectFileReaderModes, AReadBackOrPastTheNextAnnouncedRangeEndsTheReadAhead) {
  const bool buffered = GetParam();
  TempDir dir;
  const std::string content = random_text(5 * kBuffer + 7, 13);
  test::write_bytes(dir / "f", content);
  DirectReadFile file(dir / "f", buffered, "test");
  const std::vector<ByteRange> ranges = jumbled_ranges();
  DirectFileReader reader({kBuffer, 3, buffered});
  // A jump back.
  reader.read_ahead(file, ranges);
  expect_ranges_read_back(reader, file, content, {ranges[0]});
  expect_ranges_read_back(reader, file, content, {ranges[1]});
  EXPECT_EQ(reader.ranges_read_ahead(), 2u);
  expect_ranges_read_back(reader, file, content, {{ranges[0].begin - 100, ranges[0].begin}});
  for (size_t i = 2; i < ranges.size(); ++i)
    expect_ranges_read_back(reader, file, content, {ranges[i]});
  EXPECT_EQ(reader.ranges_read_ahead(), 2u);
  // A jump ahead, past the next announced range.
  reader.read_ahead(file, ranges);
  expect_ranges_read_back(reader, file, content, {ranges[0]});
  expect_ranges_read_back(reader, file, content, {ranges[3]});
  expect_ranges_read_back(reader, file, content, {ranges[1]});
  EXPECT_EQ(reader.ranges_read_ahead(), 3u);
  // Another file's read.
  test::write_bytes(dir / "g", content);
  DirectReadFile other(dir / "g", buffered, "test");
  reader.read_ahead(file, ranges);
  expect_ranges_read_back(reader, other, content, {ranges[0]});
  expect_ranges_read_back(reader, file, content, {ranges[0]});
  EXPECT_EQ(reader.ranges_read_ahead(), 3u);
}

TEST_P(DirectFileReaderModes, AFailedReadAheadIsReportedOnlyByTheReadThatAsksForItsBytes) {
  const bool buffered = GetParam();
  TempDir dir;
  const fs::path path = dir / "f";
  const int64_t size = 4 * kBuffer + 100;
  const std::string content = random_text(size, 14);
  test::write_bytes(path, content);
  DirectReadFile file(path, buffered, "test");
  fs::resize_file(path, static_cast<uintmax_t>(kBuffer + 5));
  DirectFileReader reader({kBuffer, 2, buffered});
  const std::vector<ByteRange> past_the_cut{{2 * kBuffer, 3 * kBuffer}, {3 * kBuffer, size}};
  // Announced, never asked for: nothing to report.
  reader.read_ahead(file, past_the_cut);
  expect_ranges_read_back(reader, file, content, {{0, 10}});
  reader.read_ahead(file, past_the_cut);
  reader.cancel_read_ahead();
  // Asked for: the read that asks fails naming the file, and the reader stays usable.
  reader.read_ahead(file, {{0, 10}, past_the_cut[0], past_the_cut[1]});
  expect_ranges_read_back(reader, file, content, {{0, 10}});
  EXPECT_EQ(reader.ranges_read_ahead(), 1u);
  test::expect_error<FormatError>(
      [&] { reader.read(file, {past_the_cut[0]}); },
      {"[test]", path.string(), "the file ends at byte", "truncated while read"});
  expect_ranges_read_back(reader, file, content, {{5, kBuffer}});
  EXPECT_EQ(reader.ranges_read_ahead(), 1u);
  test::expect_error<ValueError>(
      [&] {
        reader.read_ahead(file, {{0, size + 1}});
      },
      {path.string(), "[0, " + std::to_string(size + 1) + ")",
       "to read ahead are outside the file"});
}

INSTANTIATE_TEST_SUITE_P(Io, DirectFileReaderModes, ::testing::Values(false, true),
                         [](const auto& p) { return p.param ? "Buffered" : "Direct"; });

TEST(DirectFileReader, DirectOnADiskCountsWholeBlocks) {
  TempDir dir;
  const fs::path path = dir / "f";
  test::write_bytes(path, random_text(3 * 4096 + 10, 4));
  DirectReadFile file(path, false, "test");
  if (!file.direct()) GTEST_SKIP() << dir.path() << " refuses O_DIRECT";
  DirectFileReader reader({kBuffer, 2, false});
  reader.read(file, {{5, 10}});  // one whole block
  EXPECT_EQ(reader.bytes_read(), 4096u);
  reader.read(file, {{3 * 4096 + 1, 3 * 4096 + 10}});  // the partial last block, buffered
  EXPECT_EQ(reader.bytes_read(), 4096u + 10);
  reader.read(file, {{4095, 3 * 4096 + 10}});  // blocks 0-2 direct, then the last 10 bytes
  EXPECT_EQ(reader.bytes_read(), 4096u + 10 + 3 * 4096 + 10);
}

TEST(DirectFileReader, RefusedODirectFallsBackToBufferedSayingSoOnce) {
  TempDir dir;
  const std::string content = random_text(2 * kBuffer + 3, 5);
  test::write_bytes(dir / "a", content);
  test::write_bytes(dir / "b", content);
  test::ChildProcess child([&](int report) {
    if (!test::refuse_o_direct()) return test::report_line(report, "no seccomp");
    ::dup2(report, STDERR_FILENO);
    test::report_line(report, "filtered");
    DirectFileReader reader({kBuffer, 2, false});
    DirectReadFile a(dir / "a", false, "checkpoint");
    DirectReadFile b(dir / "b", false, "checkpoint");  // no second warning
    const Got got = read_ranges(reader, a, {{1, 2 * kBuffer + 3}});
    test::report_line(report, str("direct ", a.direct(), b.direct(), " ",
                                  got.bytes[0] == content.substr(1) ? "equal" : "differ"));
  });
  const std::string first = child.read_line();
  const std::string out = child.read_all();
  EXPECT_EQ(child.wait(), 0);
  if (first == "no seccomp") GTEST_SKIP() << "seccomp filters are not permitted here";
  EXPECT_EQ(out, "[checkpoint] warning: the filesystem of " + dir.path().string() +
                     " refuses O_DIRECT (Invalid argument; tmpfs does): its files are read "
                     "through the page cache\n"
                     "direct 00 equal\n");
}

// tmpfs refuses O_DIRECT before Linux 6.6 and takes it since: either way the bytes read back, and
// the warning comes exactly when O_DIRECT was refused.
TEST(DirectFileReader, WorksOnTmpfs) {
  if (!fs::is_directory("/dev/shm")) GTEST_SKIP() << "no /dev/shm";
  const fs::path shm = fs::path("/dev/shm") / ("zt_direct_read_test_" + std::to_string(::getpid()));
  fs::create_directories(shm);
  {
    const std::string content = random_text(kBuffer + 4097, 6);
    test::write_bytes(shm / "f", content);
    ::testing::internal::CaptureStderr();
    DirectReadFile file(shm / "f", false, "test");
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(err.find("refuses O_DIRECT") != std::string::npos, !file.direct()) << err;
    DirectFileReader reader({kBuffer, 2, false});
    expect_ranges_read_back(reader, file, content,
                            {{0, kBuffer + 4097}, {kBuffer + 4097, kBuffer + 4097}});
  }
  fs::remove_all(shm);
}

TEST(DirectFileReader, OptionsOutOfRangeAreRefused) {
  test::expect_error<ValueError>([] { DirectFileReader r({0, 2, false}); }, {"buffer of 0 bytes"});
  test::expect_error<ValueError>(
      [] {
        DirectFileReader r({4096, 0, false});
      },
      {"0 buffers in flight"});
}

}  // namespace
}  // namespace zt::io
