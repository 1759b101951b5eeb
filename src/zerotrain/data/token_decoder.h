// The decoders of SentencePiece-style tokenizer.json files, over the list of token spellings as
// Hugging Face `tokenizers` runs them (each step maps the list to a new list, the result is the
// concatenation): "Replace" (a string in each token), "ByteFallback" (runs of <0xXX> tokens become
// their bytes when those are valid UTF-8, else one U+FFFD per byte), "Fuse" (one token), "Strip"
// (up to `start` / `stop` copies of a character at each token's ends) and "Metaspace" ("▁" back to
// a space, dropped in the first token unless the prepend scheme is "never"); Llama 2 and Mistral
// use Sequence[Replace "▁" -> " ", ByteFallback, Fuse, Strip " " 1 0]. Tested in
// tests/data/test_sentencepiece_parts.cpp and against `tokenizers` through the tokenizer.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace zt::data {

struct DecoderStep {
  enum class Kind { Replace, ByteFallback, Fuse, Strip, Metaspace };
  Kind kind = Kind::Fuse;
  std::string pattern;   // Replace: the text replaced (not empty); Metaspace: the meta space
  std::string content;   // Replace: the replacement; Strip: the one character stripped
  size_t start = 0;      // Strip: at most this many leading copies
  size_t stop = 0;       // Strip: at most this many trailing copies
  bool prepends = true;  // Metaspace: the encoder put a meta space in front (scheme not "never")
};

class TokenDecoder {
 public:
  // Throws ValueError for an empty Replace pattern or a Strip content that is not one character.
  explicit TokenDecoder(std::vector<DecoderStep> steps);

  std::string decode(std::vector<std::string> tokens) const;

 private:
  std::vector<DecoderStep> steps_;
};

}  // namespace zt::data
