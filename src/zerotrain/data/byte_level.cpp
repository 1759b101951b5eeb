// The GPT-2 byte <-> code point tables, built once.
#include "zerotrain/data/byte_level.h"

#include <array>

#include "zerotrain/data/utf8.h"

namespace zt::data {
namespace {

struct Tables {
  std::array<char32_t, 256> to_char{};
  std::array<int16_t, 324> to_byte{};  // code points 0..323 cover the whole alphabet
};

bool maps_to_itself(int b) {
  return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

const Tables& tables() {
  static const Tables instance = [] {
    Tables t;
    t.to_byte.fill(-1);
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const char32_t c = maps_to_itself(b) ? static_cast<char32_t>(b) : next++;
      t.to_char[b] = c;
      t.to_byte[c] = static_cast<int16_t>(b);
    }
    return t;
  }();
  return instance;
}

}  // namespace

char32_t byte_to_char(uint8_t b) {
  return tables().to_char[b];
}

std::optional<uint8_t> char_to_byte(char32_t cp) {
  const auto& t = tables();
  if (cp >= t.to_byte.size() || t.to_byte[cp] < 0) return std::nullopt;
  return static_cast<uint8_t>(t.to_byte[cp]);
}

std::string to_byte_level(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes)
    append_utf8(out, byte_to_char(static_cast<uint8_t>(c)));
  return out;
}

std::optional<std::string> from_byte_level(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (size_t i = 0; i < token.size();) {
    const DecodedChar c = decode_utf8(token, i);
    if (!c.valid) return std::nullopt;
    const auto b = char_to_byte(c.cp);
    if (!b) return std::nullopt;
    out.push_back(static_cast<char>(*b));
    i += c.len;
  }
  return out;
}

}  // namespace zt::data
