// tokenizer.json validation: each unsupported or malformed setting is refused with an error that
// names the file and the key.
#include <gtest/gtest.h>

#include "data/tokenizer_fixtures.h"
#include "zerotrain/data/tokenizer.h"

namespace zt::data {
namespace {

using nlohmann::json;

// A minimal valid byte-level BPE configuration.
json minimal_config() {
  json vocab = json::object();
  for (const char* t : {"a", "b", "ab", "\xC4\xA0", "<eos>"})
    vocab[t] = vocab.size();
  return {
      {"added_tokens",
       json::array({{{"id", 4}, {"content", "<eos>"}, {"special", true}, {"normalized", false}}})},
      {"normalizer", nullptr},
      {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}}},
      {"decoder", {{"type", "ByteLevel"}}},
      {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", json::array({"a b"})}}}};
}

void expect_error(const json& cfg, const std::string& fragment) {
  try {
    Tokenizer::from_json(cfg.dump(), "t.json");
    ADD_FAILURE() << "expected an error containing: " << fragment;
  } catch (const TokenizerError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
        << "message: " << e.what() << "\nexpected: " << fragment;
    EXPECT_EQ(std::string(e.what()).rfind("[tokenizer] t.json: ", 0), 0u) << e.what();
  }
}

TEST(TokenizerJson, MinimalConfigWorks) {
  const Tokenizer tok = Tokenizer::from_json(minimal_config().dump(), "t.json");
  EXPECT_EQ(tok.vocab_size(), 5u);
  EXPECT_EQ(tok.encode("ab<eos>b a"), (std::vector<uint32_t>{2, 4, 1, 3, 0}));
  EXPECT_EQ(tok.decode(std::vector<uint32_t>{2, 4, 3, 1}), "ab<eos> b");
  EXPECT_EQ(tok.decode(std::vector<uint32_t>{2, 4, 3, 1}, true), "ab b");
}

TEST(TokenizerJson, ErrorsNameTheKey) {
  json cfg = minimal_config();
  cfg["model"]["type"] = "Unigram";
  expect_error(cfg, "model.type: expected \"BPE\", got \"Unigram\"");

  cfg = minimal_config();
  cfg.erase("model");
  expect_error(cfg, "model: missing");

  cfg = minimal_config();
  cfg["model"].erase("vocab");
  expect_error(cfg, "model.vocab: missing");

  cfg = minimal_config();
  cfg["model"]["vocab"]["a"] = "zero";
  expect_error(cfg, "model.vocab[\"a\"]: expected a token id");

  cfg = minimal_config();
  cfg["model"]["merges"] = json::array({"a b", "ab"});
  expect_error(cfg, "model.merges[1]: expected \"left right\" (one space), got \"ab\"");

  cfg = minimal_config();
  cfg["model"]["merges"] = json::array({json::array({"a", "b"}), 7});
  expect_error(cfg, "model.merges[1]: expected \"left right\" or [left, right]");

  cfg = minimal_config();
  cfg["model"]["merges"] = json::array({"a q"});
  expect_error(cfg, "model.merges[0]: \"q\" (from the merge \"a q\") is not in model.vocab");

  cfg = minimal_config();
  cfg["model"]["dropout"] = 0.1;
  expect_error(cfg, "model.dropout");

  cfg = minimal_config();
  cfg["model"]["byte_fallback"] = true;
  expect_error(cfg, "model.byte_fallback");

  cfg = minimal_config();
  cfg["model"]["continuing_subword_prefix"] = "##";
  expect_error(cfg, "model.continuing_subword_prefix");

  cfg = minimal_config();
  cfg["model"]["unk_token"] = "<unk>";
  expect_error(cfg, "model.unk_token: \"<unk>\" is not in model.vocab");

  cfg = minimal_config();
  cfg["normalizer"] = {{"type", "NFC"}};
  expect_error(cfg, "normalizer.type: normalizers are not supported");

  cfg = minimal_config();
  cfg["pre_tokenizer"] = {{"type", "Whitespace"}};
  expect_error(cfg,
               "pre_tokenizer.type: expected \"ByteLevel\" or \"Metaspace\" (or null), got "
               "\"Whitespace\"");

  cfg = minimal_config();
  cfg["pre_tokenizer"]["add_prefix_space"] = "yes";
  expect_error(cfg, "pre_tokenizer.add_prefix_space: expected true or false");

  cfg = minimal_config();
  cfg["decoder"] = nullptr;
  expect_error(cfg, "decoder: missing");

  cfg = minimal_config();
  cfg["added_tokens"][0].erase("content");
  expect_error(cfg, "added_tokens[0].content: missing");

  cfg = minimal_config();
  cfg["added_tokens"][0]["id"] = -1;
  expect_error(cfg, "added_tokens[0].id: expected a token id");
}

TEST(TokenizerJson, RepeatedKeysAreRefused) {
  // nlohmann keeps the last of a repeated key; the reader refuses the file instead.
  const std::string text = minimal_config().dump();
  const std::string vocab_start = "\"vocab\":{";
  const size_t at = text.find(vocab_start);
  ASSERT_NE(at, std::string::npos);
  std::string repeated = text;
  repeated.insert(at + vocab_start.size(), "\"b\":0,");
  try {
    Tokenizer::from_json(repeated, "t.json");
    ADD_FAILURE() << "expected an error";
  } catch (const TokenizerError& e) {
    EXPECT_EQ(std::string(e.what()),
              "[tokenizer] t.json: model.vocab: the key \"b\" appears more than once");
  }
}

// 70,000 nested arrays (what crashed every reader by recursion) are one line.
TEST(TokenizerJson, DeepNestingIsOneLine) {
  const std::string deep = std::string(70'000, '[') + std::string(70'000, ']');
  try {
    Tokenizer::from_json(deep, "t.json");
    ADD_FAILURE() << "expected an error";
  } catch (const TokenizerError& e) {
    EXPECT_EQ(std::string(e.what()),
              "[tokenizer] t.json: not valid JSON: nested deeper than 64 levels");
  }
}

TEST(TokenizerJson, RepeatedIdsAreRefused) {
  json cfg = minimal_config();
  cfg["model"]["vocab"]["b"] = 0;
  expect_error(cfg, "model.vocab[\"b\"]: id 0 is also the id of \"a\"");

  cfg = minimal_config();
  cfg["added_tokens"].push_back({{"id", 4}, {"content", "<pad>"}, {"special", true}});
  expect_error(cfg, "added_tokens[1].id: id 4 is also the id of added_tokens[0]");
}

TEST(TokenizerJson, AbsurdIdsAreRefusedBeforeAllocating) {
  // An id of 2^32-1 would size the id tables at 4 G entries; it is refused by the reader.
  json cfg = minimal_config();
  cfg["model"]["vocab"]["b"] = 4294967295u;
  expect_error(cfg, "model.vocab[\"b\"]: id 4294967295 is far above the vocabulary's 5 entries");

  cfg = minimal_config();
  cfg["added_tokens"][0]["id"] = 4294967295u;
  expect_error(cfg, "added_tokens[0].id: id 4294967295 is far above the 6 tokens");

  cfg = minimal_config();
  cfg["model"]["vocab"]["b"] = 4294967296u;
  expect_error(cfg, "model.vocab[\"b\"]: expected a token id (0 to 2^32-1)");

  // A modest gap is allowed (some files skip ids before their added tokens).
  cfg = minimal_config();
  cfg["added_tokens"][0]["id"] = 1000;
  EXPECT_EQ(Tokenizer::from_json(cfg.dump(), "t.json").vocab_size(), 1001u);
}

TEST(TokenizerJson, FileErrors) {
  try {
    Tokenizer::from_json("{\"model\": ", "broken.json");
    ADD_FAILURE() << "expected an error";
  } catch (const TokenizerError& e) {
    EXPECT_NE(std::string(e.what()).find("broken.json: not valid JSON"), std::string::npos)
        << e.what();
  }
  try {
    Tokenizer::from_file("/nonexistent/tokenizer.json");
    ADD_FAILURE() << "expected an error";
  } catch (const TokenizerError& e) {
    EXPECT_EQ(std::string(e.what()),
              "[tokenizer] /nonexistent/tokenizer.json: cannot open the tokenizer file");
  }
}

TEST(TokenizerJson, TokenToId) {
  const Tokenizer tok = Tokenizer::from_json(minimal_config().dump(), "t.json");
  EXPECT_EQ(tok.token_to_id("<eos>"), 4u);
  EXPECT_EQ(tok.token_to_id("ab"), 2u);
  EXPECT_EQ(tok.token_to_id("\xC4\xA0"), 3u);
  EXPECT_FALSE(tok.token_to_id("zzz").has_value());
}

}  // namespace
}  // namespace zt::data
