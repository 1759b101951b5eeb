// `data prepare` as a library call: document splitting, output equal to per-document encoding in
// input order whatever the thread count and chunk size, eos handling, and input errors.
#include <gtest/gtest.h>

#include "data/temp_dir.h"
#include "data/tokenizer_fixtures.h"
#include "zerotrain/data/token_file_prepare.h"

namespace zt::data {
namespace {

using Docs = std::vector<std::string_view>;

TEST(DataPrepare, SplitDocumentsOnBlankLines) {
  EXPECT_EQ(split_documents("a\nb\n", false), (Docs{"a\nb\n"}));
  EXPECT_EQ(split_documents("a\nb\n\nc\n", true), (Docs{"a\nb", "c"}));
  EXPECT_EQ(split_documents("\n\n a \n \t\r\n\nb\nc", true), (Docs{" a ", "b\nc"}));
  EXPECT_EQ(split_documents("one", true), (Docs{"one"}));
  EXPECT_EQ(split_documents("\n  \n", true), Docs{});
  EXPECT_EQ(split_documents("", true), Docs{});
  EXPECT_EQ(split_documents("x\r\n\r\ny\r\n", true), (Docs{"x\r", "y\r"}));
}

class DataPrepareFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string base = test::read_text_file(test::small_bpe_dir() / "cases.json");
    // Varied documents: paragraphs of real text cut from the fixture file, plus tricky ones.
    for (int i = 0; i < 40; ++i) {
      std::string doc = base.substr(static_cast<size_t>(i) * 997 % 20000, 200 + i * 37);
      texts_.push_back(doc);
    }
    texts_.push_back("café naïve 日本語 🙂 <|endoftext|> I'm done.\n");
    texts_.push_back("");
    for (size_t i = 0; i < texts_.size(); ++i)
      inputs_.push_back(dir_.write("doc" + std::to_string(i) + ".txt", texts_[i]));
  }

  // What the output must hold: each document's encoding, then eos when appended.
  std::vector<uint32_t> expected(const Tokenizer& tok, std::optional<uint32_t> eos) const {
    std::vector<uint32_t> out;
    for (const auto& t : texts_) {
      const auto ids = tok.encode(t);
      out.insert(out.end(), ids.begin(), ids.end());
      if (eos) out.push_back(*eos);
    }
    return out;
  }

  test::TempDir dir_;
  std::vector<std::string> texts_;
  std::vector<std::filesystem::path> inputs_;
  Tokenizer tok_ = Tokenizer::from_file(test::small_bpe_dir() / "tokenizer.json");
};

TEST_F(DataPrepareFiles, OutputIsIndependentOfThreadsAndChunks) {
  const std::vector<uint32_t> want = expected(tok_, 0u);
  std::string first_bytes;
  for (int threads : {1, 3}) {
    for (size_t chunk : {size_t{1}, size_t{5000}, size_t{1} << 24}) {
      PrepareOptions opt;
      opt.inputs = inputs_;
      opt.output = dir_ / ("out_" + std::to_string(threads) + "_" + std::to_string(chunk) + ".bin");
      opt.append_eos = true;
      opt.threads = threads;
      opt.chunk_bytes = chunk;
      uint64_t last_progress = 0;
      const PrepareSummary s = prepare_token_file(tok_, opt, [&](uint64_t done) {
        EXPECT_GE(done, last_progress);
        last_progress = done;
      });
      EXPECT_EQ(last_progress, s.input_bytes);
      EXPECT_EQ(s.documents, texts_.size());
      EXPECT_EQ(s.tokens, want.size());
      const TokenFile f(opt.output);
      EXPECT_EQ(f.read(0, f.size()), want) << threads << " threads, chunk " << chunk;
      EXPECT_EQ(f.header().eos_id, 0u);
      const std::string bytes = test::read_text_file(opt.output);
      if (first_bytes.empty()) first_bytes = bytes;
      EXPECT_EQ(bytes, first_bytes);
    }
  }
}

TEST_F(DataPrepareFiles, WithoutEosAndSplitOnBlankLines) {
  const auto path =
      dir_.write("paras.txt", "First paragraph.\nStill first.\n\n\nSecond one.\n  \nThird\n");
  PrepareOptions opt;
  opt.inputs = {path};
  opt.output = dir_ / "paras.bin";
  opt.split_on_blank_lines = true;
  const PrepareSummary s = prepare_token_file(tok_, opt);
  EXPECT_EQ(s.documents, 3u);
  const TokenFile f(opt.output);
  EXPECT_FALSE(f.header().eos_id.has_value());
  std::vector<uint32_t> want;
  for (const char* d : {"First paragraph.\nStill first.", "Second one.", "Third"}) {
    const auto ids = tok_.encode(d);
    want.insert(want.end(), ids.begin(), ids.end());
  }
  EXPECT_EQ(f.read(0, f.size()), want);
}

TEST_F(DataPrepareFiles, Errors) {
  PrepareOptions opt;
  opt.inputs = {inputs_[0], dir_ / "missing.txt"};
  opt.output = dir_ / "x.bin";
  try {
    prepare_token_file(tok_, opt);
    ADD_FAILURE() << "expected an error";
  } catch (const DataInputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "[data] input file " + (dir_ / "missing.txt").string() + ": no such file");
  }
  EXPECT_FALSE(std::filesystem::exists(opt.output));

  opt.inputs = {inputs_[0]};
  opt.append_eos = true;
  opt.eos_token = "</s>";
  EXPECT_THROW(prepare_token_file(tok_, opt), TokenizerError);

  opt.eos_token = "<|endoftext|>";
  opt.output = dir_ / "no_such_dir" / "x.bin";
  EXPECT_THROW(prepare_token_file(tok_, opt), TokenFileError);

  opt.inputs = {};
  EXPECT_THROW(prepare_token_file(tok_, opt), DataInputError);
}

}  // namespace
}  // namespace zt::data
