// The text normalizers SentencePiece-style tokenizer.json files use (Llama 2, Mistral v0.1):
// "Prepend" (put a string before a non-empty text), "Replace" with a string pattern (every
// non-overlapping occurrence, left to right) and "Sequence" of those, applied in order, as Hugging
// Face `tokenizers` applies them to each piece of text between added tokens. Tested in
// tests/data/test_sentencepiece_parts.cpp and against `tokenizers` through the tokenizer.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace zt::data {

struct NormalizerStep {
  enum class Kind { Prepend, Replace };
  Kind kind = Kind::Prepend;
  std::string pattern;  // Replace: the text replaced (never empty)
  std::string content;  // Prepend: the text put in front; Replace: the replacement
};

class Normalizer {
 public:
  Normalizer() = default;
  // Throws ValueError for a Replace step with an empty pattern.
  explicit Normalizer(std::vector<NormalizerStep> steps);

  bool empty() const { return steps_.empty(); }
  std::string apply(std::string_view text) const;

 private:
  std::vector<NormalizerStep> steps_;
};

// `text` with every non-overlapping occurrence of `pattern` (not empty) replaced by `content`.
std::string replace_all(std::string_view text, std::string_view pattern, std::string_view content);

}  // namespace zt::data
