// Added tokens (special tokens such as <|endoftext|>, and user-added words): matched in the raw
// text before the pre-tokenizer runs, as Hugging Face's AddedVocabulary does: leftmost-longest
// matching, first the tokens with normalized=false, then those with normalized=true in the pieces
// that are left; single_word keeps a match only between non-word characters; lstrip / rstrip let a
// match swallow the white space on its left / right. A normalized token is matched by its content
// passed through the tokenizer's normalizer, in normalized text, as `tokenizers` does. Tested in
// tests/data/test_tokenizer_added_tokens.cpp and against `tokenizers`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zerotrain/data/normalizer.h"

namespace zt::data {

struct AddedToken {
  uint32_t id = 0;
  std::string content;
  bool single_word = false;
  bool lstrip = false;
  bool rstrip = false;
  bool normalized = false;
  bool special = false;
};

// A piece of the text: either an added token or plain text for the pre-tokenizer.
struct TextSegment {
  size_t begin, end;           // byte offsets in the text
  std::optional<uint32_t> id;  // the added token, or nothing for plain text
};

class AddedVocabulary {
 public:
  AddedVocabulary() = default;
  // `normalizer` (may be null or empty) spells the normalized tokens' patterns.
  explicit AddedVocabulary(std::vector<AddedToken> tokens, const Normalizer* normalizer = nullptr);

  // Covers `text` with segments, in order (an empty text gives no segment): both passes, for a
  // tokenizer without a normalizer.
  std::vector<TextSegment> split(std::string_view text) const;
  // One pass: the tokens with normalized=false (over the raw text) or normalized=true (over the
  // normalized text of a plain segment of the first pass).
  std::vector<TextSegment> split_pass(std::string_view text, bool normalized) const;
  // What a token is matched by: its content, normalized when the token is.
  const std::string& pattern(const AddedToken& token) const;

  const std::vector<AddedToken>& tokens() const { return tokens_; }
  // Ids of the tokens given with an empty content, left out as `tokenizers` leaves them out (they
  // could never match); callers say so in one warning line.
  const std::vector<uint32_t>& empty_content_ids() const { return empty_content_ids_; }
  const AddedToken* find_by_id(uint32_t id) const;
  const AddedToken* find_by_content(std::string_view content) const;

 private:
  // One matching pass: the tokens with the given `normalized` flag, over text[begin, end).
  void split_pass(std::string_view text, size_t begin, size_t end, bool normalized,
                  std::vector<TextSegment>& out) const;
  std::vector<uint32_t> empty_content_ids_;
  // Longest token of the pass that matches at `pos`, or -1.
  int longest_match(std::string_view text, size_t pos, size_t end, bool normalized) const;

  std::vector<AddedToken> tokens_;
  std::vector<std::string> patterns_;  // per token, what it is matched by
  bool first_byte_[2][256] = {};       // per pass: bytes that start some token
};

}  // namespace zt::data
