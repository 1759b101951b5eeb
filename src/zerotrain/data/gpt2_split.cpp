// The GPT-2 split: contractions, then "optional space + run of one class", then white space.
#include "zerotrain/data/gpt2_split.h"

#include "zerotrain/data/unicode_class.h"
#include "zerotrain/data/utf8.h"

namespace zt::data {
namespace {

struct Char {
  CharClass cls;
  size_t len;
};

Char char_at(std::string_view s, size_t i) {
  const auto b = static_cast<unsigned char>(s[i]);
  if (b < 0x80) return {char_class(b), 1};
  const DecodedChar c = decode_utf8(s, i);
  return {c.valid ? char_class(c.cp) : CharClass::other, c.len};
}

// End of the run of characters of class `cls` that starts at i.
size_t run_end(std::string_view s, size_t i, CharClass cls) {
  while (i < s.size()) {
    const Char c = char_at(s, i);
    if (c.cls != cls) break;
    i += c.len;
  }
  return i;
}

// Length of a contraction ('s 't 're 've 'm 'll 'd) at i, or 0.
size_t contraction_len(std::string_view s, size_t i) {
  if (s[i] != '\'' || i + 1 >= s.size()) return 0;
  const char a = s[i + 1];
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
  if (i + 2 >= s.size()) return 0;
  const char b = s[i + 2];
  if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
  return 0;
}

}  // namespace

size_t gpt2_piece_end(std::string_view text, size_t begin) {
  if (const size_t n = contraction_len(text, begin)) return begin + n;

  // " ?\p{L}+", " ?\p{N}+", " ?[^\s\p{L}\p{N}]+": an optional space, then a run of one class.
  const Char first = char_at(text, begin);
  if (text[begin] == ' ' && begin + 1 < text.size()) {
    const Char second = char_at(text, begin + 1);
    if (second.cls != CharClass::space) return run_end(text, begin + 1, second.cls);
  }
  if (first.cls != CharClass::space) return run_end(text, begin, first.cls);

  // "\s+(?!\S)": the white space run, less its last character when a non-space follows (that
  // character then starts the next piece); "\s+" when the run is one character long.
  size_t last_start = begin;
  size_t end = begin;
  while (end < text.size()) {
    const Char c = char_at(text, end);
    if (c.cls != CharClass::space) break;
    last_start = end;
    end += c.len;
  }
  if (end == text.size() || last_start == begin) return end;
  return last_start;
}

std::vector<std::string_view> gpt2_split(std::string_view text) {
  std::vector<std::string_view> pieces;
  for_each_gpt2_piece(text, [&](std::string_view p) { pieces.push_back(p); });
  return pieces;
}

}  // namespace zt::data
