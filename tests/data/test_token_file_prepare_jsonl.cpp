// `data prepare` on JSON Lines: each record's text field (or prompt + completion) is one document,
// encoded as the tokenizer encodes it (the SentencePiece-style fixture, on multilingual text);
// blank lines are ignored; malformed records are skipped, counted and reported with their file and
// line number in input order, whatever the thread count and chunk size.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "data/temp_dir.h"
#include "data/tokenizer_fixtures.h"
#include "zerotrain/data/token_file_prepare.h"

namespace zt::data {
namespace {

using nlohmann::json;

class DataPrepareJsonl : public ::testing::Test {
 protected:
  void SetUp() override {
    const json cases = test::read_json_file(test::sentencepiece_bpe_dir() / "cases.json")["cases"];
    for (const json& c : cases)
      texts_.push_back(c["text"].get<std::string>());
    ASSERT_GE(texts_.size(), 60u);
  }

  // Two files: the fixture texts as records, with malformed records and blank lines among them.
  void write_inputs() {
    std::string a, b;
    uint64_t line = 0;
    for (size_t i = 0; i < texts_.size(); ++i) {
      std::string& out = i < texts_.size() / 2 ? a : b;
      if (i == texts_.size() / 2) line = 0;
      const json record = {{"id", i}, {"text", texts_[i]}};
      out += record.dump() + "\n";
      ++line;
      if (i % 7 == 3) {
        out += "{\"text\": 12}\n";
        ++line;
        bad_lines_.push_back((i < texts_.size() / 2 ? "a.jsonl:" : "b.jsonl:") +
                             std::to_string(line) +
                             ": field \"text\" is a number 12, expected a string");
      }
      if (i % 11 == 5) {
        out += "\n  \t\r\n";  // blank lines: not records, not reported
        line += 2;
      }
    }
    b += "{\"text\": \"no newline at the end\"}";
    texts_.push_back("no newline at the end");
    a_ = dir_.write("a.jsonl", a);
    b_ = dir_.write("b.jsonl", b);
  }

  std::vector<uint32_t> expected(std::optional<uint32_t> eos) const {
    std::vector<uint32_t> out;
    for (const auto& t : texts_) {
      const auto ids = tok_.encode(t);
      out.insert(out.end(), ids.begin(), ids.end());
      if (eos) out.push_back(*eos);
    }
    return out;
  }

  test::TempDir dir_;
  std::vector<std::string> texts_;
  std::vector<std::string> bad_lines_;
  std::filesystem::path a_, b_;
  Tokenizer tok_ = Tokenizer::from_file(test::sentencepiece_bpe_dir() / "tokenizer.json");
};

TEST_F(DataPrepareJsonl, RecordsAreDocumentsAndMalformedOnesAreReportedInOrder) {
  write_inputs();
  ASSERT_GE(bad_lines_.size(), 8u);
  const std::vector<uint32_t> want = expected(2u);
  for (int threads : {1, 3}) {
    for (size_t chunk : {size_t{1}, size_t{3000}, size_t{1} << 24}) {
      PrepareOptions opt;
      opt.inputs = {a_, b_};
      opt.format = InputFormat::JsonLines;
      opt.fields.text = "text";
      opt.output = dir_ / "out.bin";
      opt.append_eos = true;
      opt.eos_token = "</s>";
      opt.threads = threads;
      opt.chunk_bytes = chunk;
      std::vector<std::string> reported;
      opt.report_skipped = [&](const std::string& line) { reported.push_back(line); };
      uint64_t last_progress = 0;
      const PrepareSummary s = prepare_token_file(tok_, opt, [&](uint64_t done) {
        EXPECT_GE(done, last_progress);
        last_progress = done;
      });
      const std::string where = str(threads, " threads, chunk ", chunk);
      EXPECT_EQ(last_progress, s.input_bytes) << where;
      EXPECT_EQ(s.documents, texts_.size()) << where;
      EXPECT_EQ(s.skipped_records, bad_lines_.size()) << where;
      ASSERT_EQ(reported.size(), bad_lines_.size()) << where;
      for (size_t i = 0; i < reported.size(); ++i)
        EXPECT_EQ(reported[i], (dir_.path() / bad_lines_[i]).string()) << where;
      const TokenFile f(opt.output);
      EXPECT_EQ(f.read(0, f.size()), want) << where;
    }
  }
}

TEST_F(DataPrepareJsonl, PromptCompletionPairs) {
  const auto path = dir_.write(
      "pairs.jsonl",
      "{\"prompt\": \"[INST] Quelle heure est-il ? [/INST]\", \"completion\": \" Midi.\"}\n"
      "{\"prompt\": \"Q\", \"answer\": \"A\"}\n"
      "{\"prompt\": \"\u4f60\u597d\", \"completion\": \"\u518d\u89c1\"}\n");
  PrepareOptions opt;
  opt.inputs = {path};
  opt.format = InputFormat::JsonLines;
  opt.fields.prompt = "prompt";
  opt.fields.completion = "completion";
  opt.output = dir_ / "pairs.bin";
  std::vector<std::string> reported;
  opt.report_skipped = [&](const std::string& line) { reported.push_back(line); };
  const PrepareSummary s = prepare_token_file(tok_, opt);
  EXPECT_EQ(s.documents, 2u);
  EXPECT_EQ(s.skipped_records, 1u);
  EXPECT_EQ(reported, std::vector<std::string>{path.string() + ":2: no field \"completion\""});
  std::vector<uint32_t> want = tok_.encode("[INST] Quelle heure est-il ? [/INST] Midi.");
  const auto second = tok_.encode("\u4f60\u597d\u518d\u89c1");
  want.insert(want.end(), second.begin(), second.end());
  const TokenFile f(opt.output);
  EXPECT_EQ(f.read(0, f.size()), want);
}

TEST_F(DataPrepareJsonl, OptionErrors) {
  const auto path = dir_.write("one.jsonl", "{\"text\": \"a\"}\n");
  PrepareOptions opt;
  opt.inputs = {path};
  opt.format = InputFormat::JsonLines;
  opt.output = dir_ / "x.bin";
  EXPECT_THROW(prepare_token_file(tok_, opt), DataInputError);  // no field named
  opt.fields.text = "text";
  opt.fields.prompt = "prompt";
  opt.fields.completion = "completion";
  EXPECT_THROW(prepare_token_file(tok_, opt), DataInputError);  // both ways at once
  opt.fields.prompt.clear();
  opt.fields.completion.clear();
  opt.split_on_blank_lines = true;
  EXPECT_THROW(prepare_token_file(tok_, opt), DataInputError);
  EXPECT_FALSE(std::filesystem::exists(opt.output));
  opt.split_on_blank_lines = false;
  EXPECT_EQ(prepare_token_file(tok_, opt).documents, 1u);
}

}  // namespace
}  // namespace zt::data
