// Text of generated tokens as they come, for printing while a model generates: after each new id
// the part of Tokenizer::decode(all ids so far) not yet handed out, held back while it ends in an
// incomplete UTF-8 character (decoded as U+FFFD until its last byte arrives). The pieces joined
// are decode(ids) of the whole sequence, as Hugging Face's decode(new_tokens) gives it. With
// clean_up_tokenization_spaces (a tokenizer_config.json setting, e.g. Llama 3's) the text is
// cleaned as transformers' clean_up_tokenization does (" ." -> ".", " n't" -> "n't", ...), and the
// stream holds back the text from the last space on, where a later token may still remove it.
// Tested by tests/data/test_decode_stream.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "zerotrain/data/tokenizer.h"

namespace zt::data {

// transformers' clean_up_tokenization: spaces before punctuation and English contractions removed.
std::string clean_up_tokenization(std::string text);

class DecodeStream {
 public:
  // skip_special_tokens as Tokenizer::decode (an eos at the end prints nothing).
  DecodeStream(const Tokenizer& tokenizer, bool skip_special_tokens,
               bool clean_up_tokenization_spaces = false);

  // Adds one id; returns the text that became final with it (often empty for a partial
  // character).
  std::string push(uint32_t id);
  // The text still held back, at the end of the sequence.
  std::string finish();
  // Every id pushed so far.
  const std::vector<uint32_t>& ids() const { return ids_; }

 private:
  std::string take(bool final);

  const Tokenizer& tokenizer_;
  bool skip_special_;
  bool clean_up_;
  std::vector<uint32_t> ids_;
  std::string emitted_;  // the text handed out so far
};

}  // namespace zt::data
