// The character classes of the GPT-2 pre-tokenizer split: \p{L} letters, \p{N} numbers, \s white
// space (the Unicode White_Space property, as Oniguruma's \s), and everything else; and word
// characters. The data are generated tables (unicode_tables.cpp) verified code point by code point
// against Hugging Face `tokenizers`. Tested in tests/data/test_unicode_class.cpp.
#pragma once

#include <cstdint>

namespace zt::data {

enum class CharClass : uint8_t { letter, number, space, other };

CharClass char_class(char32_t cp);

inline bool is_letter(char32_t cp) {
  return char_class(cp) == CharClass::letter;
}
inline bool is_number(char32_t cp) {
  return char_class(cp) == CharClass::number;
}
inline bool is_space(char32_t cp) {
  return char_class(cp) == CharClass::space;
}

// A word character (\w of Rust's regex crate: Alphabetic, marks, Nd, Pc, ZWNJ, ZWJ), the test
// behind added tokens' single_word.
bool is_word_char(char32_t cp);

}  // namespace zt::data
