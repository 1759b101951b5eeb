// Typed access to one tokenizer.json for the readers of tokenizer_json*.cpp: errors name the file
// and the key path ("[tokenizer] t.json: model.vocab["a"]: expected a token id ..."). Included by
// .cpp files of data/ only (it exposes nlohmann). Also the readers of the pipeline stages of
// SentencePiece-style tokenizers (tokenizer_json_pipeline.cpp). Tested through
// tests/data/test_tokenizer_json.cpp and test_tokenizer_sentencepiece.cpp.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "zerotrain/data/normalizer.h"
#include "zerotrain/data/token_decoder.h"
#include "zerotrain/data/tokenizer.h"

namespace zt::data {

class TokenizerJsonReader {
 public:
  using json = nlohmann::json;
  explicit TokenizerJsonReader(std::string source) : source_(std::move(source)) {}

  // Parses the text; a syntax error or a key repeated in one object is refused.
  json parse(std::string_view text) const;

  [[noreturn]] void fail(const std::string& path, const std::string& message) const;
  static std::string describe(const json& v);
  // A string read from the file, quoted for a message: short, escaped to printable ASCII.
  static std::string quote(std::string_view text);
  static std::string join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }

  const json& member(const json& obj, const std::string& path, const char* key) const;
  // The member, or null when it is absent or JSON null.
  const json* optional_member(const json& obj, const char* key) const;
  const json& object(const json& v, const std::string& path) const;
  const json& array(const json& v, const std::string& path) const;
  std::string string(const json& v, const std::string& path) const;
  bool boolean(const json& obj, const std::string& path, const char* key, bool fallback) const;
  uint32_t id(const json& v, const std::string& path) const;
  uint64_t count(const json& obj, const std::string& path, const char* key,
                 uint64_t fallback) const;
  // The "type" of a pipeline stage.
  std::string type(const json& stage, const std::string& path) const;

  const std::string& source() const { return source_; }

 private:
  std::string source_;
};

// The pipeline stages of a SentencePiece-style tokenizer.json, each refusing what it does not do.
Normalizer read_normalizer(const TokenizerJsonReader& r, const nlohmann::json& cfg);
PreTokenizerOptions read_sentencepiece_pre_tokenizer(const TokenizerJsonReader& r,
                                                     const nlohmann::json& cfg);
TokenDecoder read_sentencepiece_decoder(const TokenizerJsonReader& r, const nlohmann::json& cfg);

}  // namespace zt::data
