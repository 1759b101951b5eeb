// SentencePiece's word split as the "Metaspace" pre-tokenizer of Hugging Face `tokenizers` does it
// (Mistral v0.3, Llama saved with legacy=False): every space becomes the meta space "▁" (U+2581),
// a "▁" is put in front of a piece that does not start with one (always, only for the piece at the
// very start of the input, or never), and with `split` the piece is cut before each run of meta
// spaces. Tested in tests/data/test_sentencepiece_parts.cpp and against `tokenizers`.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace zt::data {

enum class PrependScheme { Always, First, Never };

struct MetaspaceOptions {
  std::string replacement = "\xE2\x96\x81";  // one character, U+2581 by default
  PrependScheme prepend_scheme = PrependScheme::Always;
  bool split = true;
};

// The words of one piece of text; `at_input_start`: the piece begins the input (for "first").
std::vector<std::string> metaspace_words(std::string_view text, bool at_input_start,
                                         const MetaspaceOptions& options);

}  // namespace zt::data
