// UTF-8 decoding with the Unicode "maximal subpart" rule for invalid input.
#include "zerotrain/data/utf8.h"

#include <cstdint>

namespace zt::data {
namespace {

constexpr char32_t kReplacement = 0xFFFD;

// Length of a well-formed sequence starting with `lead`, and the range its second byte must lie in
// (Unicode Table 3-7); 0 when `lead` cannot start a sequence.
struct LeadInfo {
  size_t len;
  uint8_t lo, hi;
};

LeadInfo lead_info(uint8_t b) {
  if (b >= 0xC2 && b <= 0xDF) return {2, 0x80, 0xBF};
  if (b == 0xE0) return {3, 0xA0, 0xBF};
  if ((b >= 0xE1 && b <= 0xEC) || b == 0xEE || b == 0xEF) return {3, 0x80, 0xBF};
  if (b == 0xED) return {3, 0x80, 0x9F};
  if (b == 0xF0) return {4, 0x90, 0xBF};
  if (b >= 0xF1 && b <= 0xF3) return {4, 0x80, 0xBF};
  if (b == 0xF4) return {4, 0x80, 0x8F};
  return {0, 0, 0};
}

// Bytes of the longest prefix of s[i..] that is a valid sequence or the start of one (>= 1), and
// whether it is a complete sequence.
DecodedChar scan(std::string_view s, size_t i) {
  const auto b0 = static_cast<uint8_t>(s[i]);
  if (b0 < 0x80) return {b0, 1, true};
  const LeadInfo info = lead_info(b0);
  if (info.len == 0) return {kReplacement, 1, false};
  char32_t cp = b0 & (0xFF >> (info.len + 1));
  for (size_t k = 1; k < info.len; ++k) {
    if (i + k >= s.size()) return {kReplacement, k, false};
    const auto b = static_cast<uint8_t>(s[i + k]);
    const uint8_t lo = k == 1 ? info.lo : 0x80, hi = k == 1 ? info.hi : 0xBF;
    if (b < lo || b > hi) return {kReplacement, k, false};
    cp = (cp << 6) | (b & 0x3F);
  }
  return {cp, info.len, true};
}

}  // namespace

DecodedChar decode_utf8(std::string_view s, size_t i) {
  DecodedChar c = scan(s, i);
  if (!c.valid) c.len = 1;  // the pre-tokenizer steps over invalid input one byte at a time
  return c;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::string utf8_lossy(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  size_t i = 0;
  while (i < bytes.size()) {
    const DecodedChar c = scan(bytes, i);
    if (c.valid) {
      out.append(bytes.substr(i, c.len));
    } else {
      append_utf8(out, kReplacement);
    }
    i += c.len;
  }
  return out;
}

}  // namespace zt::data
