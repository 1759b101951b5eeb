// Character classes of the GPT-2 split and the generated range tables behind them.
#include <gtest/gtest.h>

#include "zerotrain/data/unicode_class.h"
#include "zerotrain/data/unicode_tables.h"

namespace zt::data {
namespace {

TEST(UnicodeClass, Ascii) {
  EXPECT_EQ(char_class(U'a'), CharClass::letter);
  EXPECT_EQ(char_class(U'Z'), CharClass::letter);
  EXPECT_EQ(char_class(U'7'), CharClass::number);
  EXPECT_EQ(char_class(U' '), CharClass::space);
  for (char32_t c : {U'\t', U'\n', U'\v', U'\f', U'\r'})
    EXPECT_EQ(char_class(c), CharClass::space);
  for (char32_t c : {U'\'', U'_', U'-', U'!', U'\0', char32_t{0x1C}, char32_t{0x7F}})
    EXPECT_EQ(char_class(c), CharClass::other) << static_cast<uint32_t>(c);
}

TEST(UnicodeClass, BeyondAscii) {
  EXPECT_EQ(char_class(U'é'), CharClass::letter);
  EXPECT_EQ(char_class(U'日'), CharClass::letter);
  EXPECT_EQ(char_class(U'ß'), CharClass::letter);
  EXPECT_EQ(char_class(U'ª'), CharClass::letter);               // Lo
  EXPECT_EQ(char_class(char32_t{0x1C89}), CharClass::letter);   // new in Unicode 16
  EXPECT_EQ(char_class(U'²'), CharClass::number);               // No
  EXPECT_EQ(char_class(U'Ⅻ'), CharClass::number);               // Nl
  EXPECT_EQ(char_class(U'٣'), CharClass::number);               // Nd
  EXPECT_EQ(char_class(char32_t{0x1D7D9}), CharClass::number);  // mathematical digit one
  for (char32_t c : {0x85, 0xA0, 0x1680, 0x2000, 0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000})
    EXPECT_EQ(char_class(c), CharClass::space) << std::hex << static_cast<uint32_t>(c);
  // Not White_Space, although some libraries call them spaces.
  for (char32_t c : {0x180E, 0x200B, 0xFEFF, 0x1C, 0x1F})
    EXPECT_EQ(char_class(c), CharClass::other) << std::hex << static_cast<uint32_t>(c);
  EXPECT_EQ(char_class(char32_t{0x0301}), CharClass::other);  // combining mark
  EXPECT_EQ(char_class(U'🙂'), CharClass::other);
  EXPECT_EQ(char_class(char32_t{0x10FFFF}), CharClass::other);
}

TEST(UnicodeClass, WordCharacters) {
  EXPECT_TRUE(is_word_char(U'a'));
  EXPECT_TRUE(is_word_char(U'_'));
  EXPECT_TRUE(is_word_char(U'9'));
  EXPECT_TRUE(is_word_char(char32_t{0x0301}));  // marks are word characters
  EXPECT_TRUE(is_word_char(U'Ⓐ'));              // Other_Alphabetic symbol
  EXPECT_TRUE(is_word_char(char32_t{0x200D}));
  EXPECT_FALSE(is_word_char(U'²'));  // No is not \w
  EXPECT_FALSE(is_word_char(U'-'));
  EXPECT_FALSE(is_word_char(U' '));
  EXPECT_FALSE(is_word_char(U'🙂'));
}

void expect_sorted_disjoint(std::span<const unicode::CodeRange> ranges, const char* name) {
  ASSERT_FALSE(ranges.empty()) << name;
  for (size_t i = 0; i < ranges.size(); ++i) {
    EXPECT_LE(ranges[i].first, ranges[i].last) << name << " range " << i;
    if (i > 0) {
      EXPECT_GT(ranges[i].first, ranges[i - 1].last + 1) << name << " range " << i;
    }
  }
  EXPECT_LE(ranges.back().last, char32_t{0x10FFFF}) << name;
}

TEST(UnicodeClass, TablesAreSortedAndDisjoint) {
  expect_sorted_disjoint(unicode::letter_ranges(), "letters");
  expect_sorted_disjoint(unicode::number_ranges(), "numbers");
  expect_sorted_disjoint(unicode::word_ranges(), "words");
  EXPECT_STREQ(unicode::unicode_version(), "16.0.0");
}

}  // namespace
}  // namespace zt::data
