// GPT-2's byte <-> code point alphabet.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "zerotrain/data/byte_level.h"

namespace zt::data {
namespace {

TEST(ByteLevel, MapIsABijectionOntoPrintableCodePoints) {
  std::set<char32_t> seen;
  for (int b = 0; b < 256; ++b) {
    const char32_t c = byte_to_char(static_cast<uint8_t>(b));
    EXPECT_TRUE(seen.insert(c).second) << b;
    EXPECT_EQ(char_to_byte(c), b);
    EXPECT_FALSE(c <= 0x20 || (c >= 0x7F && c <= 0xA0) || c == 0xAD)
        << b << " -> " << static_cast<uint32_t>(c);
  }
  EXPECT_EQ(byte_to_char(' '), char32_t{0x120});   // 'Ġ'
  EXPECT_EQ(byte_to_char('\n'), char32_t{0x10A});  // 'Ċ'
  EXPECT_EQ(byte_to_char('A'), U'A');
  EXPECT_EQ(byte_to_char(0xE9), char32_t{0xE9});
  EXPECT_EQ(byte_to_char(0xAD), char32_t{0x143});  // the last byte outside the printable ranges
  EXPECT_FALSE(char_to_byte(U' ').has_value());
  EXPECT_FALSE(char_to_byte(U'日').has_value());
}

TEST(ByteLevel, SpellingRoundTripsAnyBytes) {
  EXPECT_EQ(to_byte_level(" the"), "\xC4\xA0the");  // "Ġthe"
  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    std::string bytes(static_cast<size_t>(trial), '\0');
    for (char& c : bytes)
      c = static_cast<char>(rng() & 0xFF);
    EXPECT_EQ(from_byte_level(to_byte_level(bytes)), bytes);
  }
  EXPECT_FALSE(from_byte_level("a b").has_value());           // a raw space is not in the alphabet
  EXPECT_FALSE(from_byte_level("\xE6\x97\xA5").has_value());  // 日
  EXPECT_FALSE(from_byte_level("\xFF").has_value());          // not UTF-8
}

}  // namespace
}  // namespace zt::data
