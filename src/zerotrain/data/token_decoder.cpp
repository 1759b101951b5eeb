// The decoder steps of SentencePiece-style tokenizers (see token_decoder.h).
#include "zerotrain/data/token_decoder.h"

#include <cstdint>
#include <optional>

#include "zerotrain/core/error.h"
#include "zerotrain/data/normalizer.h"
#include "zerotrain/data/utf8.h"

namespace zt::data {
namespace {

// The byte of a "<0xXX>" token (two hex digits, as Rust's u8::from_str_radix reads them).
std::optional<uint8_t> byte_token(const std::string& t) {
  if (t.size() != 6 || !t.starts_with("<0x") || t[5] != '>') return std::nullopt;
  int value = 0;
  for (size_t i = 3; i < 5; ++i) {
    const char c = t[i];
    int digit;
    if (c >= '0' && c <= '9')
      digit = c - '0';
    else if (c >= 'a' && c <= 'f')
      digit = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      digit = c - 'A' + 10;
    else if (c == '+' && i == 3)
      continue;
    else
      return std::nullopt;
    value = value * 16 + digit;
  }
  return static_cast<uint8_t>(value);
}

bool is_valid_utf8(const std::string& bytes) {
  for (size_t i = 0; i < bytes.size();) {
    const DecodedChar c = decode_utf8(bytes, i);
    if (!c.valid) return false;
    i += c.len;
  }
  return true;
}

std::vector<std::string> byte_fallback(std::vector<std::string> tokens) {
  std::vector<std::string> out;
  out.reserve(tokens.size());
  std::string bytes;
  auto flush = [&] {
    if (bytes.empty()) return;
    if (is_valid_utf8(bytes))
      out.push_back(bytes);
    else
      out.insert(out.end(), bytes.size(), "\xEF\xBF\xBD");
    bytes.clear();
  };
  for (std::string& t : tokens) {
    if (const auto b = byte_token(t)) {
      bytes.push_back(static_cast<char>(*b));
    } else {
      flush();
      out.push_back(std::move(t));
    }
  }
  flush();
  return out;
}

// Up to `start` leading and `stop` trailing copies of `ch` (one UTF-8 character) removed.
std::string strip(const std::string& t, const std::string& ch, size_t start, size_t stop) {
  size_t begin = 0, end = t.size();
  for (size_t n = 0; n < start && t.compare(begin, ch.size(), ch) == 0 && begin < end; ++n)
    begin += ch.size();
  for (size_t n = 0;
       n < stop && end - begin >= ch.size() && t.compare(end - ch.size(), ch.size(), ch) == 0; ++n)
    end -= ch.size();
  return t.substr(begin, end - begin);
}

}  // namespace

TokenDecoder::TokenDecoder(std::vector<DecoderStep> steps) : steps_(std::move(steps)) {
  for (size_t i = 0; i < steps_.size(); ++i) {
    const DecoderStep& s = steps_[i];
    if ((s.kind == DecoderStep::Kind::Replace || s.kind == DecoderStep::Kind::Metaspace) &&
        s.pattern.empty())
      throw ValueError("decoder", str("step ", i, ": the pattern must not be empty"));
    if (s.kind == DecoderStep::Kind::Strip &&
        (s.content.empty() || decode_utf8(s.content, 0).len != s.content.size()))
      throw ValueError("decoder", str("step ", i, ": Strip content must be one character, got \"",
                                      s.content, "\""));
  }
}

std::string TokenDecoder::decode(std::vector<std::string> tokens) const {
  for (const DecoderStep& step : steps_) {
    switch (step.kind) {
      case DecoderStep::Kind::Replace:
        for (std::string& t : tokens)
          t = replace_all(t, step.pattern, step.content);
        break;
      case DecoderStep::Kind::ByteFallback:
        tokens = byte_fallback(std::move(tokens));
        break;
      case DecoderStep::Kind::Fuse: {
        std::string all;
        for (const std::string& t : tokens)
          all += t;
        tokens.assign(1, std::move(all));
        break;
      }
      case DecoderStep::Kind::Strip:
        for (std::string& t : tokens)
          t = strip(t, step.content, step.start, step.stop);
        break;
      case DecoderStep::Kind::Metaspace:
        for (size_t i = 0; i < tokens.size(); ++i)
          tokens[i] = replace_all(tokens[i], step.pattern, i == 0 && step.prepends ? "" : " ");
        break;
    }
  }
  std::string out;
  for (const std::string& t : tokens)
    out += t;
  return out;
}

}  // namespace zt::data
