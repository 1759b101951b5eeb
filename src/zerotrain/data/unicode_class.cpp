// Character classes for the GPT-2 split: an ASCII table, the White_Space list, then binary search
// in the generated L / N range tables.
#include "zerotrain/data/unicode_class.h"

#include <algorithm>
#include <array>
#include <span>

#include "zerotrain/data/unicode_tables.h"

namespace zt::data {
namespace {

bool in_ranges(std::span<const unicode::CodeRange> ranges, char32_t cp) {
  auto it = std::upper_bound(ranges.begin(), ranges.end(), cp,
                             [](char32_t c, const unicode::CodeRange& r) { return c < r.first; });
  return it != ranges.begin() && cp <= std::prev(it)->last;
}

// Unicode White_Space (PropList.txt), which is what Oniguruma matches as \s in Unicode mode.
bool is_white_space(char32_t cp) {
  if (cp <= 0x20) return cp == 0x20 || (cp >= 0x09 && cp <= 0x0D);
  if (cp < 0x85) return false;
  return cp == 0x85 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) ||
         cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

CharClass classify_slow(char32_t cp) {
  if (is_white_space(cp)) return CharClass::space;
  if (in_ranges(unicode::letter_ranges(), cp)) return CharClass::letter;
  if (in_ranges(unicode::number_ranges(), cp)) return CharClass::number;
  return CharClass::other;
}

const std::array<CharClass, 128> kAscii = [] {
  std::array<CharClass, 128> t{};
  for (char32_t c = 0; c < 128; ++c)
    t[c] = classify_slow(c);
  return t;
}();

}  // namespace

CharClass char_class(char32_t cp) {
  return cp < 128 ? kAscii[cp] : classify_slow(cp);
}

bool is_word_char(char32_t cp) {
  return in_ranges(unicode::word_ranges(), cp);
}

}  // namespace zt::data
