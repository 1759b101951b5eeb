// Token files: round trips in both token widths, header validation with errors naming the field,
// and the writer's atomic replace.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "data/temp_dir.h"
#include "data/tokenizer_fixtures.h"
#include "zerotrain/data/token_file.h"

namespace zt::data {
namespace {

std::string file_bytes(const std::filesystem::path& p) {
  return test::read_text_file(p);
}

void expect_open_error(const std::filesystem::path& p, const std::string& fragment) {
  try {
    TokenFile f(p);
    ADD_FAILURE() << "expected an error containing: " << fragment;
  } catch (const TokenFileError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("[token_file] " + p.string() + ": ", 0), 0u) << msg;
    EXPECT_NE(msg.find(fragment), std::string::npos) << msg << "\nexpected: " << fragment;
  }
}

TEST(TokenFile, RoundTripUint16WithEos) {
  test::TempDir dir;
  const auto path = dir / "t.bin";
  {
    TokenFileWriter w(path, 4096, 0u);
    w.write_document(std::vector<uint32_t>{5, 6, 4095});
    w.write_document(std::vector<uint32_t>{});
    w.write_document(std::vector<uint32_t>{7});
    const TokenFileHeader& h = w.finish();
    EXPECT_EQ(h.num_tokens, 7u);
    EXPECT_EQ(h.num_documents, 3u);
  }
  EXPECT_EQ(std::filesystem::file_size(path), 64u + 7 * 2);
  TokenFile f(path);
  EXPECT_EQ(f.header().version, 1u);
  EXPECT_EQ(f.header().token_bytes, 2u);
  EXPECT_EQ(f.vocab_size(), 4096u);
  EXPECT_EQ(f.header().num_documents, 3u);
  EXPECT_EQ(f.header().eos_id, 0u);
  EXPECT_EQ(f.read(0, 7), (std::vector<uint32_t>{5, 6, 4095, 0, 0, 7, 0}));
  int32_t window[3];
  f.read(1, 3, window);
  EXPECT_EQ(window[0], 6);
  EXPECT_EQ(window[2], 0);
  EXPECT_EQ(f[2], 4095u);
  EXPECT_NO_THROW(f.check_tokens());
  EXPECT_EQ(file_bytes(path).substr(0, 8), "ZTTOKENS");
}

TEST(TokenFile, RoundTripUint32WithoutEos) {
  test::TempDir dir;
  const auto path = dir / "t.bin";
  TokenFileWriter w(path, 70000, std::nullopt);
  w.write_document(std::vector<uint32_t>{69999, 65536, 1});
  w.finish();
  TokenFile f(path);
  EXPECT_EQ(f.header().token_bytes, 4u);
  EXPECT_FALSE(f.header().eos_id.has_value());
  EXPECT_EQ(f.read(0, 3), (std::vector<uint32_t>{69999, 65536, 1}));
  EXPECT_EQ(token_bytes_for_vocab(65536), 2u);
  EXPECT_EQ(token_bytes_for_vocab(65537), 4u);
}

TEST(TokenFile, LargeWriteCrossesTheBuffer) {
  test::TempDir dir;
  const auto path = dir / "big.bin";
  std::vector<uint32_t> doc(700000);
  for (size_t i = 0; i < doc.size(); ++i)
    doc[i] = static_cast<uint32_t>((i * 7919) % 50000);
  TokenFileWriter w(path, 50000, std::nullopt);
  w.write_document(doc);
  w.write_document(doc);
  w.finish();
  TokenFile f(path);
  ASSERT_EQ(f.size(), 2 * doc.size());
  EXPECT_EQ(f.read(doc.size(), doc.size()), doc);
}

TEST(TokenFile, ReadPastTheEndThrows) {
  test::TempDir dir;
  const auto path = dir / "t.bin";
  TokenFileWriter w(path, 10, std::nullopt);
  w.write_document(std::vector<uint32_t>{1, 2, 3});
  w.finish();
  TokenFile f(path);
  EXPECT_THROW(f.read(2, 2), TokenFileError);
  EXPECT_NO_THROW(f.read(3, 0));
}

class TokenFileHeaderErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    TokenFileWriter w(good_, 1000, 999u);
    w.write_document(std::vector<uint32_t>{1, 2, 3});
    w.finish();
    bytes_ = file_bytes(good_);
  }
  // Writes the good file with `n` bytes at `offset` replaced by `value`'s.
  template <typename T>
  std::filesystem::path patched(const std::string& name, size_t offset, T value) {
    std::string b = bytes_;
    std::memcpy(b.data() + offset, &value, sizeof(T));
    return dir_.write(name, b);
  }
  test::TempDir dir_;
  std::filesystem::path good_ = dir_ / "good.bin";
  std::string bytes_;
};

TEST_F(TokenFileHeaderErrors, EachFieldIsChecked) {
  expect_open_error(patched("magic.bin", 0, uint64_t{0x4B4F54544F4E5A}),
                    "magic: expected \"ZTTOKENS\"");
  expect_open_error(patched("version.bin", 8, uint32_t{7}), "version: expected 1 or 2, got 7");
  expect_open_error(patched("bytes.bin", 12, uint32_t{3}), "token_bytes: expected 2 or 4, got 3");
  expect_open_error(patched("vocab0.bin", 16, uint64_t{0}), "vocab_size: must be positive");
  expect_open_error(patched("vocab.bin", 16, uint64_t{70000}),
                    "token_bytes: 2-byte tokens cannot hold vocab_size 70000");
  expect_open_error(patched("count.bin", 24, uint64_t{5}),
                    "num_tokens: 5 tokens of 2 bytes, but the file has 8");
  expect_open_error(patched("header.bin", 40, uint32_t{32}), "header_size: expected at least 64");
  expect_open_error(patched("eos.bin", 44, uint32_t{1000}),
                    "eos_id: 1000 is not below vocab_size 1000");
  expect_open_error(dir_.write("truncated.bin", bytes_.substr(0, bytes_.size() - 1)), "num_tokens");
  expect_open_error(dir_.write("short.bin", bytes_.substr(0, 10)),
                    "shorter than the 64-byte header");
  expect_open_error(dir_ / "missing.bin", "cannot open");
  EXPECT_NO_THROW(TokenFile{good_});
}

TEST_F(TokenFileHeaderErrors, CheckTokensFindsOutOfRangeIds) {
  const auto path = patched("bad_token.bin", 64 + 2, uint16_t{1000});
  TokenFile f(path);
  try {
    f.check_tokens();
    ADD_FAILURE() << "expected an error";
  } catch (const TokenFileError& e) {
    EXPECT_NE(
        std::string(e.what()).find(
            "token 1 (byte offset 66) is 1000, not below vocab_size 1000 (the file's header)"),
        std::string::npos)
        << e.what();
  }
  // The model's vocabulary can be the tighter bound (the file holds 1, 2, 3 and the eos 999).
  EXPECT_NO_THROW(TokenFile(good_).check_tokens(1000));
  try {
    TokenFile(good_).check_tokens(999);
    ADD_FAILURE() << "expected an error";
  } catch (const TokenFileError& e) {
    EXPECT_NE(std::string(e.what()).find(good_.string() + ": token 3 (byte offset 70) is 999, "
                                                          "not below vocab_size 999 (the model's)"),
              std::string::npos)
        << e.what();
  }
}

// The parallel scan reports the first bad token of a large file, wherever the threads split it.
TEST_F(TokenFileHeaderErrors, CheckTokensReportsTheFirstOfManyBadIds) {
  const auto path = dir_ / "large.bin";
  {
    TokenFileWriter w(path, 70000, std::nullopt);  // uint32 tokens
    w.write_document(std::vector<uint32_t>(1 << 20, 5));
    w.finish();
  }
  std::string b = file_bytes(path);
  for (const size_t index : {size_t{900000}, size_t{654321}, size_t{1000000}}) {
    const uint32_t bad = static_cast<uint32_t>(70000 + index);
    std::memcpy(b.data() + 64 + 4 * index, &bad, 4);
  }
  const auto patched_path = dir_.write("large_bad.bin", b);
  try {
    TokenFile(patched_path).check_tokens();
    ADD_FAILURE() << "expected an error";
  } catch (const TokenFileError& e) {
    EXPECT_NE(std::string(e.what()).find("token 654321 (byte offset 2617348) is 724321"),
              std::string::npos)
        << e.what();
  }
}

TEST(TokenFileWriter, ReplacesAtomicallyAndCleansUp) {
  test::TempDir dir;
  const auto path = dir / "t.bin";
  {
    TokenFileWriter w(path, 100, std::nullopt);
    w.write_document(std::vector<uint32_t>{1, 2});
    w.finish();
  }
  const std::string before = file_bytes(path);
  {
    TokenFileWriter w(path, 100, std::nullopt);
    w.write_document(std::vector<uint32_t>{3, 4, 5});
    EXPECT_EQ(file_bytes(path), before);  // the old file stays until finish()
    // Destroyed without finish(): the old file survives, the temporary one is gone.
  }
  EXPECT_EQ(file_bytes(path), before);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()),
                          std::filesystem::directory_iterator()),
            1);
}

TEST(TokenFileWriter, Errors) {
  test::TempDir dir;
  TokenFileWriter w(dir / "t.bin", 100, std::nullopt);
  try {
    w.write_document(std::vector<uint32_t>{1, 100});
    ADD_FAILURE() << "expected an error";
  } catch (const TokenFileError& e) {
    EXPECT_NE(std::string(e.what()).find("document 0 token 1 is 100, not below vocab_size 100"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(TokenFileWriter(dir / "e.bin", 100, 100u), TokenFileError);
  EXPECT_THROW(TokenFileWriter(dir / "z.bin", 0, std::nullopt), TokenFileError);
  try {
    TokenFileWriter bad(dir / "no" / "such" / "dir.bin", 100, std::nullopt);
    ADD_FAILURE() << "expected an error";
  } catch (const TokenFileError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot create the output"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace zt::data
