// SentencePiece-style BPE (Llama 2 / Mistral tokenizer.json) equals Hugging Face `tokenizers` on a
// multilingual test text: the fixture as Llama 2 lays it out (Prepend / Replace normalizer, no
// pre-tokenizer, byte_fallback, Replace / ByteFallback / Fuse / Strip decoder) and the variants
// made by editing its JSON as tools/make_sentencepiece_fixtures.py does (Metaspace "first" without
// split as Mistral v0.3; Metaspace "always" with split and the Metaspace decoder; no byte
// fallback, so unknown characters give <unk>; <unk> <s> </s> normalized); and the whole-word path
// of the BPE model beside its piece-wise one.
#include <gtest/gtest.h>

#include "data/tokenizer_fixtures.h"
#include "zerotrain/data/tokenizer.h"

namespace zt::data {
namespace {

using nlohmann::json;

const std::string kMeta(kMetaSpace);  // ▁

class TokenizerSentencePiece : public ::testing::Test {
 protected:
  void SetUp() override {
    config_ = test::read_json_file(test::sentencepiece_bpe_dir() / "tokenizer.json");
    const json fixture = test::read_json_file(test::sentencepiece_bpe_dir() / "cases.json");
    cases_ = fixture["cases"];
    vocab_size_ = fixture["vocab_size"].get<uint64_t>();
    ASSERT_GE(cases_.size(), 60u);
  }

  static Tokenizer from(const json& cfg, const std::string& name) {
    return Tokenizer::from_json(cfg.dump(), name);
  }

  // Compares encode(text) with case[key] for every case; returns how many differ.
  int count_mismatches(const Tokenizer& tok, const std::string& key) const {
    int mismatches = 0;
    BpeCache cache;
    for (const json& c : cases_) {
      const auto expected = c[key].get<std::vector<uint32_t>>();
      std::vector<uint32_t> got;
      tok.encode(c["text"].get<std::string>(), got, cache);
      EXPECT_EQ(got, expected) << key << " of case \"" << c["name"].get<std::string>() << "\"";
      mismatches += got != expected;
    }
    return mismatches;
  }

  json config_;
  json cases_;
  uint64_t vocab_size_ = 0;
};

TEST_F(TokenizerSentencePiece, EncodesLikeTokenizersWithLlama2Layout) {
  const Tokenizer tok = Tokenizer::from_file(test::sentencepiece_bpe_dir() / "tokenizer.json");
  EXPECT_EQ(tok.vocab_size(), vocab_size_);
  EXPECT_TRUE(tok.model().splits_at_meta_space());
  EXPECT_EQ(count_mismatches(tok, "ids"), 0);
}

TEST_F(TokenizerSentencePiece, EncodesWholeWordsLikeTokenizers) {
  // A merge that would cross a meta space turns piece-wise encoding off ([Note: BPE pieces at
  // meta spaces]); this one never applies (no text has a NUL byte), so the ids stay the same.
  json cfg = config_;
  cfg["model"]["vocab"][std::string("<0x00>") + kMeta] = 5000;
  cfg["model"]["merges"].push_back(std::string("<0x00> ") + kMeta);
  const Tokenizer tok = from(cfg, "whole");
  EXPECT_FALSE(tok.model().splits_at_meta_space());
  EXPECT_EQ(count_mismatches(tok, "ids"), 0);
}

TEST_F(TokenizerSentencePiece, EncodesWithMetaspaceFirstAsMistral) {
  json cfg = config_;
  cfg["normalizer"] = nullptr;
  cfg["pre_tokenizer"] = {
      {"type", "Metaspace"}, {"replacement", kMeta}, {"prepend_scheme", "first"}, {"split", false}};
  EXPECT_EQ(count_mismatches(from(cfg, "first"), "ids_metaspace_first"), 0);
}

TEST_F(TokenizerSentencePiece, EncodesAndDecodesWithMetaspaceSplit) {
  json cfg = config_;
  cfg["normalizer"] = nullptr;
  const json metaspace = {
      {"type", "Metaspace"}, {"replacement", kMeta}, {"prepend_scheme", "always"}, {"split", true}};
  cfg["pre_tokenizer"] = metaspace;
  cfg["decoder"] = metaspace;
  const Tokenizer tok = from(cfg, "split");
  EXPECT_EQ(count_mismatches(tok, "ids_metaspace_split"), 0);
  for (const json& c : cases_)
    EXPECT_EQ(tok.decode(c["ids_metaspace_split"].get<std::vector<uint32_t>>()),
              c["decoded_metaspace_split"].get<std::string>())
        << c["name"].get<std::string>();
}

TEST_F(TokenizerSentencePiece, EncodesUnknownCharactersWithoutByteFallback) {
  json cfg = config_;
  cfg["model"]["byte_fallback"] = false;
  EXPECT_EQ(count_mismatches(from(cfg, "unk"), "ids_no_byte_fallback"), 0);
}

TEST_F(TokenizerSentencePiece, NormalizedSpecialTokensAsTokenizersTreatsThem) {
  // Matched by their normalized spelling ("▁<s>"), decoded to it, hence kept by
  // skip_special_tokens (tokenizers decides specialness by the spelling).
  json cfg = config_;
  for (int i = 0; i < 3; ++i)
    cfg["added_tokens"][i]["normalized"] = true;
  const Tokenizer tok = from(cfg, "normalized specials");
  EXPECT_EQ(count_mismatches(tok, "ids_normalized_specials"), 0);
  int differ_from_ids = 0;
  for (const json& c : cases_) {
    const auto ids = c["ids_normalized_specials"].get<std::vector<uint32_t>>();
    differ_from_ids += ids != c["ids"].get<std::vector<uint32_t>>();
    EXPECT_EQ(tok.decode(ids, true),
              c["decoded_skip_special_normalized_specials"].get<std::string>())
        << c["name"].get<std::string>();
  }
  EXPECT_GT(differ_from_ids, 0);
}

TEST_F(TokenizerSentencePiece, DecodesLikeTokenizers) {
  const Tokenizer tok = from(config_, "sp");
  for (const json& c : cases_) {
    const auto ids = c["ids"].get<std::vector<uint32_t>>();
    const std::string name = c["name"].get<std::string>();
    EXPECT_EQ(tok.decode(ids), c["decoded"].get<std::string>()) << name;
    EXPECT_EQ(tok.decode(ids, true), c["decoded_skip_special"].get<std::string>()) << name;
  }
}

TEST_F(TokenizerSentencePiece, FixtureExercisesByteFallbackAndAddedTokens) {
  // The comparisons above only prove something if the text reaches these paths.
  const Tokenizer tok = from(config_, "sp");
  const uint32_t byte_0xe6 = *tok.token_to_id("<0xE6>");
  const uint32_t inst = *tok.token_to_id("[INST]");
  bool saw_byte = false, saw_inst = false, saw_normalized_added = false;
  const uint32_t zt_word = *tok.token_to_id("zt-word");
  for (const json& c : cases_)
    for (uint32_t id : c["ids"].get<std::vector<uint32_t>>()) {
      saw_byte |= id == byte_0xe6;
      saw_inst |= id == inst;
      saw_normalized_added |= id == zt_word;
    }
  EXPECT_TRUE(saw_byte && saw_inst && saw_normalized_added);
  EXPECT_EQ(tok.encode("<s>"), (std::vector<uint32_t>{1}));
}

}  // namespace
}  // namespace zt::data
