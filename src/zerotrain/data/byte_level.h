// GPT-2's byte-level alphabet: every byte maps to one printable code point (printable Latin-1 bytes
// to themselves, the rest to U+0100 upwards, so the space 0x20 becomes 'Ġ' U+0120), which is how
// byte-level BPE vocabularies spell their tokens. Tested in
// tests/data/test_byte_level.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace zt::data {

char32_t byte_to_char(uint8_t b);
// The byte a code point stands for, or nothing for code points outside the alphabet.
std::optional<uint8_t> char_to_byte(char32_t cp);

// Raw bytes -> their byte-level spelling (UTF-8 of the mapped code points).
std::string to_byte_level(std::string_view bytes);
// A byte-level spelling -> its raw bytes; nothing when a character is outside the alphabet (or the
// spelling is not valid UTF-8).
std::optional<std::string> from_byte_level(std::string_view token);

}  // namespace zt::data
