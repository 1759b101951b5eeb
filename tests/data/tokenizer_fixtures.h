// Loading the tokenizer fixtures of tests/fixtures/tokenizer (made by
// tools/make_tokenizer_fixtures.py and tools/make_sentencepiece_fixtures.py with Hugging Face
// `tokenizers`).
#pragma once

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "support/test_util.h"

namespace zt::test {

inline std::string read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline nlohmann::json read_json_file(const std::filesystem::path& path) {
  return nlohmann::json::parse(read_text_file(path));
}

inline std::filesystem::path small_bpe_dir() {
  return fixtures_dir() / "tokenizer" / "small_bpe";
}

inline std::filesystem::path sentencepiece_bpe_dir() {
  return fixtures_dir() / "tokenizer" / "sp_bpe";
}

// The tokenizer the default job uses (committed under assets/).
inline std::filesystem::path kjv_tokenizer_path() {
  return fixtures_dir().parent_path().parent_path() / "assets" / "tokenizers" / "kjv-bpe-4096" /
         "tokenizer.json";
}

}  // namespace zt::test
