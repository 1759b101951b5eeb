// A BPE tokenizer read from a Hugging Face tokenizer.json, of one of two families: byte-level BPE
// (GPT-2 style: ByteLevel pre-tokenizer and decoder, no normalizer) and SentencePiece-style BPE
// (Llama 2, Mistral: text vocabulary with "▁" for spaces and byte_fallback, a Prepend / Replace
// normalizer or a Metaspace pre-tokenizer, a Replace / ByteFallback / Fuse / Strip or Metaspace
// decoder). encode() gives the ids that `tokenizers` gives with add_special_tokens=False (the
// post-processor is not applied), decode() the text its decode() gives. Thread-safe: encode from
// many threads with one BpeCache per thread. Tested in tests/data/test_tokenizer*.cpp
// against fixtures made with `tokenizers`.
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
#include "zerotrain/data/metaspace.h"
#include "zerotrain/data/normalizer.h"
#include "zerotrain/data/token_decoder.h"
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
  // ByteLevel: the GPT-2 split on bytes; Metaspace: metaspace.h; None: a segment is one word.
  enum class Kind { ByteLevel, Metaspace, None };
  Kind kind = Kind::ByteLevel;
  // ByteLevel: prepend ' ' to a segment that does not start with one.
  bool add_prefix_space = false;
  bool use_regex = true;       // ByteLevel: split with the GPT-2 pattern (else one word)
  MetaspaceOptions metaspace;  // Metaspace
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
  // The id of a token: an added token's content or a vocabulary entry's spelling.
  std::optional<uint32_t> token_to_id(std::string_view token) const;
  const std::string& source() const { return source_; }
  const AddedVocabulary& added_tokens() const { return added_; }
  const BpeModel& model() const { return *model_; }

 private:
  Tokenizer() = default;
  // Pre-tokenizes and encodes plain (normalized) text; `at_input_start` for Metaspace's "first".
  void encode_segment(std::string_view text, bool at_input_start, std::vector<uint32_t>& out,
                      BpeCache& cache) const;

  std::string source_;
  std::shared_ptr<const BpeModel> model_;
  Normalizer normalizer_;  // empty for byte-level BPE
  AddedVocabulary added_;
  PreTokenizerOptions pre_;
  std::optional<TokenDecoder> decoder_;  // absent: the byte-level decoder
  // Byte-level: the decoded bytes of each id; with decoder_: the token's spelling ("" for gaps).
  std::vector<std::string> id_to_text_;
  std::vector<uint8_t> id_known_;    // 1 where an id has a token
  std::vector<uint8_t> id_special_;  // 1 where decode(skip_special_tokens) leaves an id out
  uint64_t vocab_size_ = 0;
};

}  // namespace zt::data
