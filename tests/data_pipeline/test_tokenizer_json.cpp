// tokenizer.json validation: each unsupported or malformed setting is refused with an error that
// names the file and the key.
#include <gtest/gtest.h>

#include "data_pipeline/tokenizer_fixtures.h"
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
  expect_error(cfg, "pre_tokenizer.type: expected \"ByteLevel\", got \"Whitespace\"");

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
