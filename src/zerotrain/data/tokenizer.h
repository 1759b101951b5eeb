// A byte-level BPE tokenizer read from a Hugging Face tokenizer.json (GPT-2 style: model.type
// "BPE", ByteLevel pre-tokenizer and decoder, no normalizer). encode() gives the ids that
// `tokenizers` gives with add_special_tokens=False (the post-processor is not applied), decode()
// the text its decode() gives. Thread-safe: encode from many threads with one BpeCache per thread.
// Tested in tests/data_pipeline/test_tokenizer*.cpp against fixtures made with `tokenizers`.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "zerotrain/core/error.h"
#include "zerotrain/data/bpe_model.h"
#include "zerotrain/data/tokenizer_added_tokens.h"

namespace zt::data {

// A tokenizer.json that cannot be read or that asks for something this tokenizer does not do. The
// message names the file and the JSON key, e.g.
//   [tokenizer] t.json: model.type: expected "BPE", got "Unigram"
class TokenizerError : public Error {
 public:
  explicit TokenizerError(const std::string& message) : Error("tokenizer", message) {}
};

struct PreTokenizerOptions {
  bool add_prefix_space = false;  // prepend ' ' to each text segment that does not start with one
  bool use_regex = true;          // split with the GPT-2 pattern (else a segment is one word)
};

class Tokenizer {
 public:
  static Tokenizer from_file(const std::filesystem::path& path);
  // `json_text` is the content of a tokenizer.json; `source` names it in errors.
  static Tokenizer from_json(std::string_view json_text, const std::string& source);

  // Appends the ids of `text` to `out`; `cache` (one per thread) memoizes words.
  void encode(std::string_view text, std::vector<uint32_t>& out, BpeCache& cache) const;
  std::vector<uint32_t> encode(std::string_view text) const;

  // The text of `ids`; special added tokens are left out when skip_special_tokens. Throws
  // TokenizerError for an id that is not in the vocabulary.
  std::string decode(std::span<const uint32_t> ids, bool skip_special_tokens = false) const;

  // One more than the largest id (model vocabulary and added tokens).
  uint64_t vocab_size() const { return vocab_size_; }
  // The id of a token, an added token's content or a byte-level spelling from the vocabulary.
  std::optional<uint32_t> token_to_id(std::string_view token) const;
  const std::string& source() const { return source_; }
  const AddedVocabulary& added_tokens() const { return added_; }
  const BpeModel& model() const { return *model_; }

 private:
  Tokenizer() = default;
  void encode_segment(std::string_view text, std::vector<uint32_t>& out, BpeCache& cache) const;

  std::string source_;
  std::shared_ptr<const BpeModel> model_;
  AddedVocabulary added_;
  PreTokenizerOptions pre_;
  std::vector<std::string> id_to_bytes_;  // decoded bytes of each id ("" for gaps)
  std::vector<uint8_t> id_known_;         // 1 where an id has a token
  uint64_t vocab_size_ = 0;
};

}  // namespace zt::data
