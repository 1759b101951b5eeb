// Streaming decode (see decode_stream.h). Each push decodes the whole sequence again (decoders
// such as SentencePiece's Strip depend on the start), which costs O(n^2) token lookups over n
// tokens: nothing next to a model's forward for the lengths generation prints.
#include "zerotrain/data/decode_stream.h"

namespace zt::data {

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

bool ends_with_replacement(const std::string& s) {
  return s.size() >= kReplacement.size() &&
         s.compare(s.size() - kReplacement.size(), kReplacement.size(), kReplacement) == 0;
}

}  // namespace

DecodeStream::DecodeStream(const Tokenizer& tokenizer, bool skip_special_tokens)
    : tokenizer_(tokenizer), skip_special_(skip_special_tokens) {}

std::string DecodeStream::push(uint32_t id) {
  ids_.push_back(id);
  return take(false);
}

std::string DecodeStream::finish() {
  return take(true);
}

std::string DecodeStream::take(bool final) {
  const std::string text = tokenizer_.decode(ids_, skip_special_);
  if (!final && ends_with_replacement(text)) return {};
  // Text already handed out cannot be taken back: should a decoder rewrite earlier text, only
  // what lies past the handed-out length follows.
  if (text.size() <= emitted_.size()) return {};
  std::string piece = text.substr(emitted_.size());
  emitted_ = text;
  return piece;
}

}  // namespace zt::data
