// The GPT-2 pre-tokenizer split, by hand instead of a regex engine. It reproduces Hugging Face's
// ByteLevel pattern
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// taking at each position the first alternative that matches (contractions are case-sensitive; a
// run of white space followed by a word keeps its last space for that word). Bytes that are not
// valid UTF-8 count as "other" characters. Tested in tests/data/test_gpt2_split.cpp and,
// through the tokenizer, against `tokenizers` itself.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace zt::data {

// End (exclusive) of the piece that starts at `begin` (< text.size()).
size_t gpt2_piece_end(std::string_view text, size_t begin);

// Calls fn(piece) for each piece, in order; the pieces concatenate to `text`.
template <typename Fn>
void for_each_gpt2_piece(std::string_view text, Fn&& fn) {
  for (size_t i = 0; i < text.size();) {
    const size_t end = gpt2_piece_end(text, i);
    fn(text.substr(i, end - i));
    i = end;
  }
}

std::vector<std::string_view> gpt2_split(std::string_view text);

}  // namespace zt::data
