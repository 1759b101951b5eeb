// UTF-8 helpers for the tokenizer: lenient decoding of one code point (a byte that does not start a
// valid sequence decodes as U+FFFD, one byte long, so that any byte string can be split and
// encoded), encoding, and the lossy conversion of decoded bytes to text. Tested in
// tests/data/test_utf8.cpp.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace zt::data {

struct DecodedChar {
  char32_t cp;  // the code point; U+FFFD for an invalid byte
  size_t len;   // bytes consumed, 1..4
  bool valid;
};

// Decodes the code point starting at s[i] (i < s.size()).
DecodedChar decode_utf8(std::string_view s, size_t i);

// Appends the UTF-8 encoding of cp.
void append_utf8(std::string& out, char32_t cp);

// `bytes` as valid UTF-8: each maximal invalid subsequence becomes U+FFFD, as Rust's
// String::from_utf8_lossy does (and so Hugging Face's byte-level decoder).
std::string utf8_lossy(std::string_view bytes);

}  // namespace zt::data
