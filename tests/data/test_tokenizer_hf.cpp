// Encodings and decodings equal those of Hugging Face `tokenizers` on the committed fixtures:
// tricky strings, random Unicode soup and real English text, for a small BPE with added tokens (as
// is, with add_prefix_space, with ignore_merges, with merges written as "a b" strings) and for the
// default job's KJV tokenizer.
#include <gtest/gtest.h>

#include "data/tokenizer_fixtures.h"
#include "zerotrain/data/tokenizer.h"

namespace zt::data {
namespace {

using nlohmann::json;

Tokenizer tokenizer_from(const json& cfg, const std::string& name) {
  return Tokenizer::from_json(cfg.dump(), name);
}

// Compares encode(text) with case[key] for every case; returns how many were compared.
int expect_encodings(const Tokenizer& tok, const json& cases, const std::string& key) {
  int compared = 0;
  BpeCache cache;
  for (const json& c : cases) {
    if (!c.contains(key)) continue;
    const auto expected = c[key].get<std::vector<uint32_t>>();
    std::vector<uint32_t> got;
    tok.encode(c["text"].get<std::string>(), got, cache);
    EXPECT_EQ(got, expected) << key << " of case \"" << c["name"].get<std::string>() << "\"";
    ++compared;
  }
  return compared;
}

class TokenizerHf : public ::testing::Test {
 protected:
  void SetUp() override {
    config_ = test::read_json_file(test::small_bpe_dir() / "tokenizer.json");
    cases_ = test::read_json_file(test::small_bpe_dir() / "cases.json")["cases"];
    ASSERT_GE(cases_.size(), 40u);
  }
  json config_;
  json cases_;
};

TEST_F(TokenizerHf, EncodesLikeTokenizers) {
  const Tokenizer tok = Tokenizer::from_file(test::small_bpe_dir() / "tokenizer.json");
  EXPECT_EQ(tok.vocab_size(), 4005u);
  EXPECT_EQ(expect_encodings(tok, cases_, "ids"), static_cast<int>(cases_.size()));
}

TEST_F(TokenizerHf, EncodesWithAddPrefixSpace) {
  json cfg = config_;
  cfg["pre_tokenizer"]["add_prefix_space"] = true;
  EXPECT_EQ(expect_encodings(tokenizer_from(cfg, "prefix"), cases_, "ids_add_prefix_space"),
            static_cast<int>(cases_.size()));
}

TEST_F(TokenizerHf, EncodesWithIgnoreMerges) {
  json cfg = config_;
  cfg["model"]["ignore_merges"] = true;
  EXPECT_EQ(expect_encodings(tokenizer_from(cfg, "ignore"), cases_, "ids_ignore_merges"),
            static_cast<int>(cases_.size()));
}

TEST_F(TokenizerHf, MergesAsStringsEqualMergesAsPairs) {
  json cfg = config_;
  ASSERT_TRUE(cfg["model"]["merges"][0].is_array());
  for (json& m : cfg["model"]["merges"])
    m = m[0].get<std::string>() + " " + m[1].get<std::string>();
  EXPECT_EQ(expect_encodings(tokenizer_from(cfg, "strings"), cases_, "ids"),
            static_cast<int>(cases_.size()));
}

TEST_F(TokenizerHf, DecodesLikeTokenizers) {
  const Tokenizer tok = tokenizer_from(config_, "small");
  for (const json& c : cases_) {
    const auto ids = c["ids"].get<std::vector<uint32_t>>();
    const std::string name = c["name"].get<std::string>();
    EXPECT_EQ(tok.decode(ids), c["decoded"].get<std::string>()) << name;
    EXPECT_EQ(tok.decode(ids, true), c["decoded_skip_special"].get<std::string>()) << name;
  }
}

TEST_F(TokenizerHf, DecodingHalfACharacterGivesReplacement) {
  const Tokenizer tok = tokenizer_from(config_, "small");
  // "é" is two bytes; its first byte alone is not UTF-8.
  const auto first_byte = tok.token_to_id("\xC3\x83");  // byte-level spelling of 0xC3
  ASSERT_TRUE(first_byte.has_value());
  EXPECT_EQ(tok.decode(std::vector<uint32_t>{*first_byte}), "\xEF\xBF\xBD");
  EXPECT_THROW(tok.decode(std::vector<uint32_t>{999999}), TokenizerError);
}

TEST(TokenizerHfKjv, DefaultJobTokenizerEncodesLikeTokenizers) {
  const Tokenizer tok = Tokenizer::from_file(test::kjv_tokenizer_path());
  EXPECT_EQ(tok.vocab_size(), 4096u);
  EXPECT_EQ(tok.token_to_id("<|endoftext|>"), 0u);
  const json cases =
      test::read_json_file(test::fixtures_dir() / "tokenizer" / "kjv_bpe_cases.json")["cases"];
  EXPECT_EQ(expect_encodings(tok, cases, "ids"), static_cast<int>(cases.size()));
  for (const json& c : cases)
    EXPECT_EQ(tok.decode(c["ids"].get<std::vector<uint32_t>>()), c["decoded"].get<std::string>())
        << c["name"].get<std::string>();
}

}  // namespace
}  // namespace zt::data
