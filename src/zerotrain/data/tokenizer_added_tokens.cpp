// Added-token matching: a first-byte filter, then the longest token at each position.
#include "zerotrain/data/tokenizer_added_tokens.h"

#include <algorithm>

#include "zerotrain/data/unicode_class.h"
#include "zerotrain/data/utf8.h"

namespace zt::data {
namespace {

// The code point that ends just before `end` (end > begin).
DecodedChar char_before(std::string_view s, size_t begin, size_t end) {
  size_t i = end - 1;
  while (i > begin && end - i < 4 && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80)
    --i;
  DecodedChar c = decode_utf8(s, i);
  if (i + c.len != end) c = decode_utf8(s, end - 1);  // not a whole character: the last byte alone
  return c;
}

bool word_before(std::string_view s, size_t begin, size_t pos) {
  if (pos == begin) return false;
  const DecodedChar c = char_before(s, begin, pos);
  return c.valid && is_word_char(c.cp);
}

bool word_after(std::string_view s, size_t pos, size_t end) {
  if (pos == end) return false;
  const DecodedChar c = decode_utf8(s.substr(0, end), pos);
  return c.valid && is_word_char(c.cp);
}

// Start of the white space that ends at `pos` (Rust regex \s*$ over s[begin, pos)).
size_t space_start_before(std::string_view s, size_t begin, size_t pos) {
  while (pos > begin) {
    const DecodedChar c = char_before(s, begin, pos);
    if (!c.valid || !is_space(c.cp)) break;
    pos -= c.len;
  }
  return pos;
}

// End of the white space that starts at `pos` (Rust regex ^\s* over s[pos, end)).
size_t space_end_after(std::string_view s, size_t pos, size_t end) {
  while (pos < end) {
    const DecodedChar c = decode_utf8(s.substr(0, end), pos);
    if (!c.valid || !is_space(c.cp)) break;
    pos += c.len;
  }
  return pos;
}

}  // namespace

AddedVocabulary::AddedVocabulary(std::vector<AddedToken> tokens, const Normalizer* normalizer)
    : tokens_(std::move(tokens)) {
  // Empty contents never match (and `tokenizers` ignores them): left out, their ids kept to say so.
  for (const AddedToken& t : tokens_)
    if (t.content.empty()) empty_content_ids_.push_back(t.id);
  std::erase_if(tokens_, [](const AddedToken& t) { return t.content.empty(); });
  patterns_.reserve(tokens_.size());
  for (const AddedToken& t : tokens_) {
    const bool normalize = t.normalized && normalizer && !normalizer->empty();
    patterns_.push_back(normalize ? normalizer->apply(t.content) : t.content);
    if (!patterns_.back().empty())
      first_byte_[t.normalized ? 1 : 0][static_cast<unsigned char>(patterns_.back()[0])] = true;
  }
}

const std::string& AddedVocabulary::pattern(const AddedToken& token) const {
  return patterns_[static_cast<size_t>(&token - tokens_.data())];
}

std::vector<TextSegment> AddedVocabulary::split_pass(std::string_view text, bool normalized) const {
  std::vector<TextSegment> out;
  split_pass(text, 0, text.size(), normalized, out);
  return out;
}

const AddedToken* AddedVocabulary::find_by_id(uint32_t id) const {
  for (const AddedToken& t : tokens_)
    if (t.id == id) return &t;
  return nullptr;
}

const AddedToken* AddedVocabulary::find_by_content(std::string_view content) const {
  for (const AddedToken& t : tokens_)
    if (t.content == content) return &t;
  return nullptr;
}

int AddedVocabulary::longest_match(std::string_view text, size_t pos, size_t end,
                                   bool normalized) const {
  int best = -1;
  for (size_t k = 0; k < tokens_.size(); ++k) {
    const std::string& p = patterns_[k];
    if (tokens_[k].normalized != normalized || p.empty() || p.size() > end - pos) continue;
    if (best >= 0 && p.size() <= patterns_[best].size()) continue;
    if (text.compare(pos, p.size(), p) == 0) best = static_cast<int>(k);
  }
  return best;
}

void AddedVocabulary::split_pass(std::string_view text, size_t begin, size_t end, bool normalized,
                                 std::vector<TextSegment>& out) const {
  const bool(&starts)[256] = first_byte_[normalized ? 1 : 0];
  size_t done = begin;  // text before this is covered by `out`
  size_t pos = begin;
  while (pos < end) {
    if (!starts[static_cast<unsigned char>(text[pos])]) {
      ++pos;
      continue;
    }
    const int k = longest_match(text, pos, end, normalized);
    if (k < 0) {
      ++pos;
      continue;
    }
    const AddedToken& t = tokens_[k];
    size_t start = pos, stop = pos + patterns_[k].size();
    pos = stop;  // matches never overlap, even a discarded one
    if (t.single_word && (word_before(text, begin, start) || word_after(text, stop, end))) continue;
    if (t.lstrip) start = std::max(space_start_before(text, begin, start), done);
    if (t.rstrip) stop = space_end_after(text, stop, end);
    if (done < start) out.push_back({done, start, std::nullopt});
    out.push_back({start, stop, t.id});
    done = stop;
    pos = stop;
  }
  if (done < end) out.push_back({done, end, std::nullopt});
}

std::vector<TextSegment> AddedVocabulary::split(std::string_view text) const {
  std::vector<TextSegment> first;
  split_pass(text, 0, text.size(), false, first);
  std::vector<TextSegment> out;
  out.reserve(first.size());
  for (const TextSegment& s : first) {
    if (s.id)
      out.push_back(s);
    else
      split_pass(text, s.begin, s.end, true, out);
  }
  return out;
}

}  // namespace zt::data
