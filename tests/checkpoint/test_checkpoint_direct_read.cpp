// CheckpointReader's reads through io::DirectFileReader (checkpoint/checkpoint_reader.h): a shard
// of tensors whose sizes sit around the 4096-byte grid and the buffer size reads back equal to
// what was saved, whole and in ranges, with O_DIRECT and buffered, for several buffer sizes; a
// byte flipped at each kind of position (a tensor's first or last byte, either side of a buffer
// boundary, on the 4096 grid, in the file's partial last block) is one line naming the file and
// the tensor that holds it, from verify_all and from read; a file truncated after opening is
// refused naming the file. Read-ahead: pieces read in the order they were saved (a resume's) are
// all taken from the read-ahead, a flipped byte in any of them still names its file and tensor,
// and a read back to an earlier piece ends the read-ahead, the later pieces then read directly
// (a flipped byte among them named too).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "io/io_test_util.h"
#include "support/test_util.h"
#include "zerotrain/checkpoint/checkpoint_reader.h"
#include "zerotrain/checkpoint/checkpoint_saver.h"
#include "zerotrain/checkpoint/checkpoint_store.h"
#include "zerotrain/checkpoint/shard_file.h"
#include "zerotrain/core/error.h"
#include "zerotrain/core/io_error.h"
#include "zerotrain/io/safetensors.h"

namespace zt {
namespace {

namespace fs = std::filesystem;
using checkpoint::CheckpointReader;

constexpr int64_t kBuffer = 3 * 4096;

struct Saved {
  std::string name;
  Tensor full;
};

// Sizes in bytes: 4, 4092, 4096, 4100, kBuffer - 2, kBuffer + 2, ~3.3 buffers.
const std::vector<Saved>& saved_tensors() {
  static const std::vector<Saved> t{
      {"w.one", test::random_tensor({1}, DType::f32, 1)},
      {"w.below_block", test::random_tensor({1023}, DType::f32, 2)},
      {"w.block", test::random_tensor({4, 256}, DType::f32, 3)},
      {"w.above_block", test::random_tensor({1025}, DType::f32, 4)},
      {"w.below_buffer", test::random_tensor({kBuffer / 2 - 1}, DType::bf16, 5)},
      {"w.above_buffer", test::random_tensor({kBuffer / 2 + 1}, DType::bf16, 6)},
      {"w.buffers", test::random_tensor({10000}, DType::f32, 7)},
  };
  return t;
}

std::string bytes(const Tensor& t) {
  const Tensor c = t.contiguous();
  return std::string(static_cast<const char*>(c.data()), c.nbytes());
}

fs::path save_one_rank(const fs::path& root) {
  checkpoint::SaveTarget target;
  target.root = root;
  target.world = 1;
  target.rank = 0;
  target.run_id = "00000000abcd";
  target.keep = 1;
  checkpoint::Manifest header;
  header.step = 3;
  header.optimizer_step = 3;
  header.model_config = "{}";
  header.train_state = nlohmann::json::object();
  checkpoint::CheckpointSaver saver(target);
  checkpoint::RankShard shard;
  for (const Saved& s : saved_tensors())
    shard.write({s.name, s.full.shape(), 0, s.full.numel()}, s.full.reshape({s.full.numel()}), {});
  saver.save(std::move(shard), header);
  saver.wait();
  return checkpoint::resolve_checkpoint(root);
}

Tensor read_range(CheckpointReader& reader, const Saved& s, int64_t b, int64_t e) {
  Tensor out = Tensor::empty({e - b}, s.full.dtype(), Device::cpu());
  reader.read({s.name, s.full.shape(), b, e}, out, {});
  return out;
}

struct Mode {
  int64_t buffer_bytes;
  int buffers;
  bool buffered;
};

std::vector<Mode> modes() {
  std::vector<Mode> m;
  for (const bool buffered : {false, true})
    for (const auto& [bytes, n] : std::vector<std::pair<int64_t, int>>{
             {4096, 1}, {kBuffer, 2}, {kBuffer, 3}, {int64_t{16} << 20, 4}})
      m.push_back({bytes, n, buffered});
  return m;
}

std::string describe(const Mode& m) {
  return str(m.buffered ? "buffered" : "direct", "_", m.buffer_bytes, "x", m.buffers);
}
void PrintTo(const Mode& m, std::ostream* os) {
  *os << describe(m);
}

io::DirectReadOptions options_of(const Mode& m) {
  return {m.buffer_bytes, m.buffers, m.buffered};
}

class CheckpointDirectRead : public ::testing::TestWithParam<Mode> {};

TEST_P(CheckpointDirectRead, TensorsReadBackAsSavedWholeAndInRanges) {
  test::TempDir dir;
  const fs::path ckpt = save_one_rank(dir.path());
  CheckpointReader reader(ckpt, options_of(GetParam()));
  for (const Saved& s : saved_tensors()) {
    const int64_t n = s.full.numel();
    const Tensor flat = s.full.reshape({n});
    // The first read of a piece checks it whole; a later one reads only its range.
    EXPECT_EQ(bytes(read_range(reader, s, 0, n)), bytes(flat)) << s.name;
    if (n > 2) {
      EXPECT_EQ(bytes(read_range(reader, s, 1, n - 1)), bytes(flat.slice(0, 1, n - 1))) << s.name;
      EXPECT_EQ(bytes(read_range(reader, s, n - 1, n)), bytes(flat.slice(0, n - 1, n))) << s.name;
    }
  }
  EXPECT_TRUE(reader.verify_all().empty());
  EXPECT_GT(reader.bytes_read(), 0u);
}

TEST_P(CheckpointDirectRead, AFirstReadOfARangeChecksTheWholePiece) {
  test::TempDir dir;
  const fs::path ckpt = save_one_rank(dir.path());
  CheckpointReader reader(ckpt, options_of(GetParam()));
  const Saved& s = saved_tensors().back();
  EXPECT_EQ(bytes(read_range(reader, s, 4000, 4003)),
            bytes(s.full.reshape({s.full.numel()}).slice(0, 4000, 4003)));
  EXPECT_TRUE(reader.verify_all().empty());
}

// Where a flipped byte sits, by kind, as a file offset; the name says which kind.
struct Position {
  std::string kind;
  uint64_t offset;
};

std::vector<Position> positions(const fs::path& file) {
  const io::SafetensorsReader st(file);
  const uint64_t size = fs::file_size(file);
  const uint64_t data = size - [&] {
    uint64_t b = 0;
    for (const io::SafetensorsEntry& e : st.entries())
      b += e.nbytes();
    return b;
  }();
  std::vector<Position> p;
  for (const io::SafetensorsEntry& e : st.entries()) {
    p.push_back({"first byte of " + e.name, data + e.begin});
    p.push_back({"last byte of " + e.name, data + e.end - 1});
  }
  for (const uint64_t grid : {uint64_t{4096}, static_cast<uint64_t>(kBuffer)})
    for (uint64_t at = grid; at < size; at += grid) {
      if (at <= data) continue;
      p.push_back({str("byte before ", grid, "-grid offset ", at), at - 1});
      p.push_back({str("byte at ", grid, "-grid offset ", at), at});
    }
  if (size % 4096 != 0) p.push_back({"partial last block", size - 1 - (size % 4096) / 2});
  return p;
}

// The tensor whose data holds file offset `at`.
std::string tensor_at(const fs::path& file, uint64_t at) {
  const io::SafetensorsReader st(file);
  const uint64_t size = fs::file_size(file);
  uint64_t total = 0;
  for (const io::SafetensorsEntry& e : st.entries())
    total += e.nbytes();
  const uint64_t data = size - total;
  for (const io::SafetensorsEntry& e : st.entries())
    if (at >= data + e.begin && at < data + e.end) return e.name;
  return {};
}

void flip_byte(const fs::path& file, uint64_t at) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(at));
  char c = 0;
  f.get(c);
  f.seekp(static_cast<std::streamoff>(at));
  f.put(static_cast<char>(c ^ 0x10));
}

TEST_P(CheckpointDirectRead, AFlippedByteAnywhereNamesTheFileAndItsTensor) {
  test::TempDir dir;
  const fs::path pristine = save_one_rank(dir.path() / "pristine");
  const fs::path shard_name = checkpoint::rank_file_name(0, 1);
  const std::vector<Position> where = positions(pristine / shard_name);
  ASSERT_GT(where.size(), 20u);
  int n = 0;
  for (const Position& p : where) {
    const fs::path ckpt = dir.path() / str("case", n++);
    fs::copy(pristine, ckpt, fs::copy_options::recursive);
    const fs::path file = ckpt / shard_name;
    const std::string tensor = tensor_at(file, p.offset);
    ASSERT_FALSE(tensor.empty()) << p.kind;
    flip_byte(file, p.offset);
    {
      CheckpointReader reader(ckpt, options_of(GetParam()));
      const std::vector<std::string> problems = reader.verify_all();
      ASSERT_EQ(problems.size(), 1u) << p.kind;
      EXPECT_NE(problems[0].find(file.string() + ": tensor " + tensor + " fails its checksum"),
                std::string::npos)
          << p.kind << ": " << problems[0];
    }
    CheckpointReader reader(ckpt, options_of(GetParam()));
    for (const Saved& s : saved_tensors()) {
      if (s.name == tensor)
        test::expect_error<FormatError>([&] { read_range(reader, s, 0, s.full.numel()); },
                                        {file.string(), "tensor " + tensor, "fails its checksum"});
      else
        EXPECT_EQ(bytes(read_range(reader, s, 0, s.full.numel())),
                  bytes(s.full.reshape({s.full.numel()})))
            << p.kind << ", " << s.name;
    }
    fs::remove_all(ckpt);
  }
}

TEST_P(CheckpointDirectRead, AFileTruncatedAfterOpeningIsRefusedNamingIt) {
  test::TempDir dir;
  const fs::path ckpt = save_one_rank(dir.path());
  const fs::path file = ckpt / checkpoint::rank_file_name(0, 1);
  CheckpointReader reader(ckpt, options_of(GetParam()));
  const Saved& first = saved_tensors().front();
  read_range(reader, first, 0, 1);  // opens the file
  fs::resize_file(file, fs::file_size(file) / 2);
  const std::vector<std::string> problems = reader.verify_all();
  ASSERT_FALSE(problems.empty());
  EXPECT_NE(problems[0].find(file.string() + ": the file ends at byte"), std::string::npos)
      << problems[0];
  const Saved& last = saved_tensors().back();
  test::expect_error<FormatError>([&] { read_range(reader, last, 0, last.full.numel()); },
                                  {file.string(), "the file ends at byte"});
}

// Reads every saved tensor whole in the order it was saved (a resume's order), expecting the one
// named `bad` (if any) to fail its checksum naming `file` and itself, the others equal.
void read_in_saved_order(CheckpointReader& reader, const fs::path& file, const std::string& bad,
                         size_t from = 0) {
  for (size_t i = from; i < saved_tensors().size(); ++i) {
    const Saved& s = saved_tensors()[i];
    if (s.name == bad)
      test::expect_error<FormatError>([&] { read_range(reader, s, 0, s.full.numel()); },
                                      {file.string(), "tensor " + bad, "fails its checksum"});
    else
      EXPECT_EQ(bytes(read_range(reader, s, 0, s.full.numel())),
                bytes(s.full.reshape({s.full.numel()})))
          << s.name;
  }
}

TEST_P(CheckpointDirectRead, PiecesReadInSavedOrderComeFromTheReadAheadAndFlipsAreNamed) {
  test::TempDir dir;
  const fs::path pristine = save_one_rank(dir.path() / "pristine");
  const fs::path shard_name = checkpoint::rank_file_name(0, 1);
  {
    CheckpointReader reader(pristine, options_of(GetParam()));
    read_in_saved_order(reader, pristine / shard_name, "");
    EXPECT_EQ(reader.pieces_read_ahead(), saved_tensors().size());
    EXPECT_TRUE(reader.verify_all().empty());
  }
  int n = 0;
  for (const Position& p : positions(pristine / shard_name)) {
    if (p.kind.find(" byte of ") == std::string::npos) continue;  // each tensor's first and last
    const fs::path ckpt = dir.path() / str("case", n++);
    fs::copy(pristine, ckpt, fs::copy_options::recursive);
    const fs::path file = ckpt / shard_name;
    const std::string tensor = tensor_at(file, p.offset);
    ASSERT_FALSE(tensor.empty()) << p.kind;
    flip_byte(file, p.offset);
    CheckpointReader reader(ckpt, options_of(GetParam()));
    read_in_saved_order(reader, file, tensor);
    EXPECT_EQ(reader.pieces_read_ahead(), saved_tensors().size()) << p.kind;
    fs::remove_all(ckpt);
  }
  EXPECT_EQ(n, 2 * static_cast<int>(saved_tensors().size()));
}

TEST_P(CheckpointDirectRead, AReadBackToAnEarlierPieceEndsTheReadAhead) {
  test::TempDir dir;
  const fs::path ckpt = save_one_rank(dir.path());
  const fs::path file = ckpt / checkpoint::rank_file_name(0, 1);
  const Saved& last = saved_tensors().back();
  for (const Position& p : positions(file))
    if (p.kind == "first byte of " + last.name) flip_byte(file, p.offset);
  CheckpointReader reader(ckpt, options_of(GetParam()));
  for (size_t i = 0; i < 3; ++i) {
    const Saved& s = saved_tensors()[i];
    EXPECT_EQ(bytes(read_range(reader, s, 0, s.full.numel())),
              bytes(s.full.reshape({s.full.numel()})));
  }
  EXPECT_EQ(reader.pieces_read_ahead(), 3u);
  const Saved& back = saved_tensors()[1];
  const int64_t n = back.full.numel();
  EXPECT_EQ(bytes(read_range(reader, back, 1, n - 1)),
            bytes(back.full.reshape({n}).slice(0, 1, n - 1)));
  read_in_saved_order(reader, file, last.name, 3);
  EXPECT_EQ(reader.pieces_read_ahead(), 3u);
  const std::vector<std::string> problems = reader.verify_all();
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find(file.string() + ": tensor " + last.name + " fails its checksum"),
            std::string::npos)
      << problems[0];
}

INSTANTIATE_TEST_SUITE_P(Modes, CheckpointDirectRead, ::testing::ValuesIn(modes()),
                         [](const auto& p) { return describe(p.param); });

}  // namespace
}  // namespace zt
