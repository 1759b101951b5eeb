// What generation reads beside the weights: eos ids from generation_config.json before
// config.json (an integer, a list, null, absent; malformed values named), and the ids a prompt
// starts with: the TemplateProcessing post-processor's leading special tokens (the
// SentencePiece-style fixture's "<s>"), none for a byte-level post-processor, adjusted by
// tokenizer_config.json's add_bos_token; its clean_up_tokenization_spaces.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "data/temp_dir.h"
#include "data/tokenizer_fixtures.h"
#include "zerotrain/core/io_error.h"
#include "zerotrain/io/generation_config.h"

namespace zt {
namespace {

using ids = std::vector<int64_t>;

TEST(GenerationConfig, EosIdsPreferGenerationConfig) {
  test::TempDir dir;
  EXPECT_EQ(io::read_eos_token_ids(dir.path()), ids{});
  dir.write("config.json", R"({"eos_token_id": 2})");
  EXPECT_EQ(io::read_eos_token_ids(dir.path()), ids{2});
  dir.write("generation_config.json", R"({"eos_token_id": [128001, 128009]})");
  EXPECT_EQ(io::read_eos_token_ids(dir.path()), (ids{128001, 128009}));
  dir.write("generation_config.json", R"({"eos_token_id": null})");
  EXPECT_EQ(io::read_eos_token_ids(dir.path()), ids{});
  dir.write("generation_config.json", R"({"bos_token_id": 1})");  // no eos key: config.json's
  EXPECT_EQ(io::read_eos_token_ids(dir.path()), ids{2});
  dir.write("generation_config.json", R"({"eos_token_id": "</s>"})");
  try {
    io::read_eos_token_ids(dir.path());
    FAIL() << "no error";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("generation_config.json: eos_token_id: expected an "
                                         "integer or a list of integers, got a string"),
              std::string::npos)
        << e.what();
  }
}

TEST(GenerationConfig, PromptPrefixFromThePostProcessor) {
  EXPECT_EQ(io::read_prompt_prefix_ids(test::sentencepiece_bpe_dir() / "tokenizer.json", 1),
            ids{1});
  EXPECT_EQ(io::read_prompt_prefix_ids(test::kjv_tokenizer_path(), 0), ids{});
}

TEST(GenerationConfig, AddBosTokenAdjustsThePrefix) {
  test::TempDir dir;
  const std::string sp = test::read_text_file(test::sentencepiece_bpe_dir() / "tokenizer.json");
  const std::string kjv = test::read_text_file(test::kjv_tokenizer_path());
  dir.write("tokenizer.json", sp);
  dir.write("tokenizer_config.json", R"({"add_bos_token": false})");
  EXPECT_EQ(io::read_prompt_prefix_ids(dir / "tokenizer.json", 1), ids{});
  dir.write("tokenizer.json", kjv);
  dir.write("tokenizer_config.json", R"({"add_bos_token": true})");
  EXPECT_EQ(io::read_prompt_prefix_ids(dir / "tokenizer.json", 0), ids{0});
  EXPECT_EQ(io::read_prompt_prefix_ids(dir / "tokenizer.json", -1), ids{});  // no bos to add
  dir.write("tokenizer_config.json", R"({"add_bos_token": "yes"})");
  EXPECT_THROW(io::read_prompt_prefix_ids(dir / "tokenizer.json", 0), FormatError);
}

TEST(GenerationConfig, CleanUpTokenizationSpaces) {
  test::TempDir dir;
  const std::filesystem::path tok = dir.write("tokenizer.json", "{}");
  EXPECT_FALSE(io::read_clean_up_tokenization_spaces(tok));  // no tokenizer_config.json
  dir.write("tokenizer_config.json", R"({"add_bos_token": true})");
  EXPECT_FALSE(io::read_clean_up_tokenization_spaces(tok));
  dir.write("tokenizer_config.json", R"({"clean_up_tokenization_spaces": true})");
  EXPECT_TRUE(io::read_clean_up_tokenization_spaces(tok));
  dir.write("tokenizer_config.json", R"({"clean_up_tokenization_spaces": 1})");
  EXPECT_THROW(io::read_clean_up_tokenization_spaces(tok), FormatError);
}

}  // namespace
}  // namespace zt
