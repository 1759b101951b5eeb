// Lenient UTF-8 decoding and the lossy conversion that follows Rust's String::from_utf8_lossy.
#include <gtest/gtest.h>

#include "zerotrain/data/utf8.h"

namespace zt::data {
namespace {

const std::string kFffd = "\xEF\xBF\xBD";

TEST(Utf8, DecodesOneToFourBytes) {
  const std::string s = "a\xC3\xA9\xE6\x97\xA5\xF0\x9F\x99\x82";  // a é 日 🙂
  const char32_t cps[] = {U'a', U'é', U'日', U'🙂'};
  size_t i = 0;
  for (char32_t expected : cps) {
    const DecodedChar c = decode_utf8(s, i);
    EXPECT_TRUE(c.valid);
    EXPECT_EQ(c.cp, expected);
    i += c.len;
  }
  EXPECT_EQ(i, s.size());
}

TEST(Utf8, InvalidBytesDecodeOneAtATime) {
  for (const std::string s :
       {"\xFF", "\x80", "\xC0\x80", "\xED\xA0\x80", "\xF0\x9F\x99", "\xF5\x80"}) {
    const DecodedChar c = decode_utf8(s, 0);
    EXPECT_FALSE(c.valid) << s.size();
    EXPECT_EQ(c.len, 1u);
    EXPECT_EQ(c.cp, char32_t{0xFFFD});
  }
}

TEST(Utf8, AppendRoundTrips) {
  for (char32_t cp : {char32_t{0x41}, char32_t{0x7FF}, char32_t{0x800}, char32_t{0xFFFF},
                      char32_t{0x10000}, char32_t{0x10FFFF}}) {
    std::string s;
    append_utf8(s, cp);
    const DecodedChar c = decode_utf8(s, 0);
    EXPECT_TRUE(c.valid);
    EXPECT_EQ(c.cp, cp);
    EXPECT_EQ(c.len, s.size());
  }
}

TEST(Utf8, LossyReplacesMaximalInvalidSubparts) {
  EXPECT_EQ(utf8_lossy("plain café"), "plain café");
  // A truncated 4-byte sequence is one maximal subpart: one replacement.
  EXPECT_EQ(utf8_lossy("Hello\xF0\x90\x80World"), "Hello" + kFffd + "World");
  // E0 needs A0..BF next: E0 alone is replaced, then each stray continuation byte.
  EXPECT_EQ(utf8_lossy("\xE0\x80\x80"), kFffd + kFffd + kFffd);
  // A surrogate encoding (ED A0 80) is invalid the same way.
  EXPECT_EQ(utf8_lossy("\xED\xA0\x80"), kFffd + kFffd + kFffd);
  EXPECT_EQ(utf8_lossy("\xF5x"), kFffd + "x");
  EXPECT_EQ(utf8_lossy("a\xC3"), "a" + kFffd);
}

}  // namespace
}  // namespace zt::data
