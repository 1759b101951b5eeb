// Token files of version 2 (a flags byte per token, [Note: token flags]): the writer's flags
// (document starts, counted targets, the eos after an answer), the reader's size and flag checks,
// and version 1 files still read as before.
#include <gtest/gtest.h>

#include <cstring>

#include "data/temp_dir.h"
#include "data/tokenizer_fixtures.h"
#include "zerotrain/data/token_file.h"

namespace zt::data {
namespace {

std::vector<uint8_t> all_flags(const TokenFile& f) {
  std::vector<uint8_t> out(f.size());
  f.read_flags(0, f.size(), out.data());
  return out;
}

std::string check_error(const std::filesystem::path& p) {
  try {
    TokenFile f(p);
    f.check_tokens();
  } catch (const TokenFileError& e) {
    return e.what();
  }
  return "";
}

constexpr uint8_t S = kTokenStartsDocument, C = kTokenCountsAsTarget;

TEST(TokenFileV2, WriterSetsStartsTargetsAndTheEosAfterAnAnswer) {
  test::TempDir dir;
  const auto path = dir / "v2.bin";
  TokenFileWriter w(path, 100, 99u, /*with_flags=*/true);
  w.write_document(std::vector<uint32_t>{5, 6, 7, 8}, std::vector<uint8_t>{1, 0, 1, 1});
  w.write_document(std::vector<uint32_t>{9, 10}, std::vector<uint8_t>{0, 0});
  w.write_document(std::vector<uint32_t>{}, std::vector<uint8_t>{});
  const TokenFileHeader h = w.finish();
  EXPECT_EQ(h.version, 2u);
  EXPECT_EQ(h.num_documents, 3u);
  EXPECT_EQ(h.num_tokens, 9u);
  EXPECT_EQ(h.flags_offset, 64u + 9 * 2);

  TokenFile f(path);
  ASSERT_TRUE(f.has_flags());
  EXPECT_EQ(f.header().flags_offset, h.flags_offset);
  EXPECT_EQ(f.read(0, 9), (std::vector<uint32_t>{5, 6, 7, 8, 99, 9, 10, 99, 99}));
  // The first token of a document starts it and never counts, even when its mask says so; the
  // eos counts after a counted last token only; an empty document is its eos, starting it.
  EXPECT_EQ(all_flags(f), (std::vector<uint8_t>{S, 0, C, C, C, S, 0, 0, S}));
  EXPECT_NO_THROW(f.check_tokens());
  EXPECT_EQ(std::filesystem::file_size(path), 64u + 9 * 2 + 9);
}

TEST(TokenFileV2, LargeFileCrossesTheFlagsBuffer) {
  test::TempDir dir;
  const auto path = dir / "big.bin";
  TokenFileWriter w(path, 70000, std::nullopt, true);
  const size_t n = (size_t{1} << 20) + 333;  // past one 1 MiB flags buffer
  std::vector<uint32_t> tokens(n);
  std::vector<uint8_t> counts(n);
  for (size_t i = 0; i < n; ++i) {
    tokens[i] = static_cast<uint32_t>(i % 70000);
    counts[i] = static_cast<uint8_t>(i % 3 == 0);
  }
  w.write_document(tokens, counts);
  w.write_document(std::vector<uint32_t>{}, std::vector<uint8_t>{});  // no eos: nothing written
  w.write_document(std::vector<uint32_t>{1, 2}, std::vector<uint8_t>{0, 1});
  w.finish();
  TokenFile f(path);
  EXPECT_EQ(f.header().token_bytes, 4u);
  EXPECT_EQ(f.header().num_documents, 2u);
  ASSERT_EQ(f.size(), n + 2);
  EXPECT_EQ(f[n - 1], static_cast<uint32_t>((n - 1) % 70000));
  for (size_t i : {size_t{1}, size_t{3}, size_t{4}, n - 2, n - 1})
    EXPECT_EQ(f.flags(i), counts[i] ? C : 0) << i;
  EXPECT_EQ(f.flags(n), S);
  EXPECT_EQ(f.flags(n + 1), C);
  EXPECT_NO_THROW(f.check_tokens());
}

TEST(TokenFileV2, WriterRefusesAMissingOrMismatchedMask) {
  test::TempDir dir;
  TokenFileWriter v1(dir / "v1.bin", 100, std::nullopt);
  EXPECT_THROW(v1.write_document(std::vector<uint32_t>{1}, std::vector<uint8_t>{1}),
               TokenFileError);
  TokenFileWriter v2(dir / "v2.bin", 100, std::nullopt, true);
  EXPECT_THROW(v2.write_document(std::vector<uint32_t>{1}), TokenFileError);
  EXPECT_THROW(v2.write_document(std::vector<uint32_t>{1, 2}, std::vector<uint8_t>{1}),
               TokenFileError);
  EXPECT_THROW(v2.write_document(std::vector<uint32_t>{100}, std::vector<uint8_t>{1}),
               TokenFileError);
}

class TokenFileV2Errors : public ::testing::Test {
 protected:
  void SetUp() override {
    TokenFileWriter w(good_, 1000, 999u, true);
    w.write_document(std::vector<uint32_t>{1, 2, 3}, std::vector<uint8_t>{0, 1, 1});
    w.write_document(std::vector<uint32_t>{4, 5}, std::vector<uint8_t>{0, 1});
    w.finish();
    bytes_ = test::read_text_file(good_);  // 64 + 7 x 2 + 7 bytes
  }
  std::filesystem::path patched(const std::string& name, size_t offset, uint8_t value) {
    std::string b = bytes_;
    b[offset] = static_cast<char>(value);
    return dir_.write(name, b);
  }
  test::TempDir dir_;
  std::filesystem::path good_ = dir_ / "good.bin";
  std::string bytes_;
  static constexpr size_t kFlags = 64 + 7 * 2;
};

TEST_F(TokenFileV2Errors, SizesAndFlagsAreChecked) {
  EXPECT_EQ(check_error(good_), "");
  EXPECT_NE(check_error(dir_.write("trunc.bin", bytes_.substr(0, bytes_.size() - 1)))
                .find("num_tokens: 7 tokens of 2 bytes and a flags byte, but the file has 20"),
            std::string::npos);
  EXPECT_NE(check_error(patched("offset.bin", 48, 0)).find("flags_offset: expected 78"),
            std::string::npos);
  EXPECT_NE(check_error(patched("bits.bin", kFlags + 2, 0x80))
                .find("flags of token 2 (byte offset 80) are 0x80: unknown bits (known: 0x03)"),
            std::string::npos);
  EXPECT_NE(check_error(patched("first.bin", kFlags, 0)).find("the first token must start"),
            std::string::npos);
  EXPECT_NE(check_error(patched("counting.bin", kFlags + 4, S | C))
                .find("token 4 (byte offset 82) are 0x03: a document's first token cannot count"),
            std::string::npos);
  EXPECT_NE(check_error(patched("docs.bin", kFlags + 2, S))
                .find("num_documents: the header says 2, the flags start 3 documents"),
            std::string::npos);
}

TEST_F(TokenFileV2Errors, AVersion1FileHasNoFlags) {
  TokenFileWriter w(dir_ / "v1.bin", 1000, std::nullopt);
  w.write_document(std::vector<uint32_t>{1, 2, 3});
  w.finish();
  TokenFile f(dir_ / "v1.bin");
  EXPECT_EQ(f.header().version, 1u);
  EXPECT_FALSE(f.has_flags());
  uint8_t out[3];
  EXPECT_THROW(f.read_flags(0, 3, out), TokenFileError);
  // A version 1 header with a nonzero flags_offset is refused, so the reserved bytes stay zero.
  std::string b = test::read_text_file(dir_ / "v1.bin");
  b[48] = 1;
  EXPECT_NE(check_error(dir_.write("v1_offset.bin", b)).find("flags_offset: must be 0"),
            std::string::npos);
}

}  // namespace
}  // namespace zt::data
