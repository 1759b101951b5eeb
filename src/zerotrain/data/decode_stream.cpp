// Streaming decode (see decode_stream.h). Each push decodes the whole sequence again (decoders
// such as SentencePiece's Strip depend on the start), which costs O(n^2) token lookups over n
// tokens: nothing next to a model's forward for the lengths generation prints.
#include "zerotrain/data/decode_stream.h"

#include <string_view>
#include <utility>

namespace zt::data {

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  std::string out;
  size_t start = 0;
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, start)) {
    out.append(s, start, at - start);
    out.append(to);
    start = at + from.size();
  }
  out.append(s, start, std::string::npos);
  s = std::move(out);
}

// Where the cleaned text is final: before the last space (a later token may still turn " x" into
// "x"), and before a " ' " that the space would complete.
size_t stable_length(const std::string& raw) {
  size_t cut = raw.rfind(' ');
  if (cut == std::string::npos) return 0;
  if (cut >= 2 && raw[cut - 1] == '\'' && raw[cut - 2] == ' ') cut -= 2;
  return cut;
}

bool ends_with_replacement(const std::string& s) {
  return s.size() >= kReplacement.size() &&
         s.compare(s.size() - kReplacement.size(), kReplacement.size(), kReplacement) == 0;
}

}  // namespace

std::string clean_up_tokenization(std::string text) {
  // The order of transformers' chained str.replace calls.
  static constexpr std::pair<std::string_view, std::string_view> kRules[] = {
      {" .", "."},     {" ?", "?"},   {" !", "!"},   {" ,", ","},     {" ' ", "'"},
      {" n't", "n't"}, {" 'm", "'m"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
  for (const auto& [from, to] : kRules)
    replace_all(text, from, to);
  return text;
}

DecodeStream::DecodeStream(const Tokenizer& tokenizer, bool skip_special_tokens,
                           bool clean_up_tokenization_spaces)
    : tokenizer_(tokenizer),
      skip_special_(skip_special_tokens),
      clean_up_(clean_up_tokenization_spaces) {}

std::string DecodeStream::push(uint32_t id) {
  ids_.push_back(id);
  return take(false);
}

std::string DecodeStream::finish() {
  return take(true);
}

std::string DecodeStream::take(bool final) {
  std::string text = tokenizer_.decode(ids_, skip_special_);
  if (!final && ends_with_replacement(text)) return {};
  if (clean_up_) text = clean_up_tokenization(final ? text : text.substr(0, stable_length(text)));
  // Text already handed out cannot be taken back: should a decoder rewrite earlier text, only
  // what lies past the handed-out length follows.
  if (text.size() <= emitted_.size()) return {};
  std::string piece = text.substr(emitted_.size());
  emitted_ = text;
  return piece;
}

}  // namespace zt::data
