// Tokenizer encode / decode: the added tokens of the raw text first, then the normalizer and the
// normalized added tokens on each plain piece, then the pre-tokenizer and BPE on what is left.
#include "zerotrain/data/tokenizer.h"

#include "zerotrain/data/gpt2_split.h"
#include "zerotrain/data/metaspace.h"
#include "zerotrain/data/utf8.h"

namespace zt::data {

void Tokenizer::encode(std::string_view text, std::vector<uint32_t>& out, BpeCache& cache) const {
  std::string normalized_text;
  for (const TextSegment& s : added_.split_pass(text, false)) {
    if (s.id) {
      out.push_back(*s.id);
      continue;
    }
    std::string_view piece = text.substr(s.begin, s.end - s.begin);
    if (!normalizer_.empty()) {
      normalized_text = normalizer_.apply(piece);
      piece = normalized_text;
    }
    for (const TextSegment& n : added_.split_pass(piece, true)) {
      if (n.id)
        out.push_back(*n.id);
      else
        encode_segment(piece.substr(n.begin, n.end - n.begin), s.begin == 0 && n.begin == 0, out,
                       cache);
    }
  }
}

std::vector<uint32_t> Tokenizer::encode(std::string_view text) const {
  BpeCache cache;
  std::vector<uint32_t> ids;
  encode(text, ids, cache);
  return ids;
}

void Tokenizer::encode_segment(std::string_view text, bool at_input_start,
                               std::vector<uint32_t>& out, BpeCache& cache) const {
  if (pre_.kind == PreTokenizerOptions::Kind::None) {
    model_->encode_word(text, out, &cache);
    return;
  }
  if (pre_.kind == PreTokenizerOptions::Kind::Metaspace) {
    for (const std::string& word : metaspace_words(text, at_input_start, pre_.metaspace))
      model_->encode_word(word, out, &cache);
    return;
  }
  std::string prefixed;
  if (pre_.add_prefix_space && !text.empty() && text[0] != ' ') {
    prefixed.reserve(text.size() + 1);
    prefixed.push_back(' ');
    prefixed.append(text);
    text = prefixed;
  }
  if (!pre_.use_regex) {
    model_->encode_word(text, out, &cache);
    return;
  }
  for_each_gpt2_piece(text, [&](std::string_view word) { model_->encode_word(word, out, &cache); });
}

std::string Tokenizer::decode(std::span<const uint32_t> ids, bool skip_special_tokens) const {
  std::vector<std::string> tokens;
  std::string bytes;
  for (uint32_t id : ids) {
    if (id >= id_known_.size() || !id_known_[id])
      throw TokenizerError(
          str(source_, ": decode: id ", id, " is not in the vocabulary (size ", vocab_size_, ")"));
    if (skip_special_tokens && id_special_[id]) continue;
    if (decoder_)
      tokens.push_back(id_to_text_[id]);
    else
      bytes += id_to_text_[id];
  }
  return decoder_ ? decoder_->decode(std::move(tokens)) : utf8_lossy(bytes);
}

std::optional<uint32_t> Tokenizer::token_to_id(std::string_view token) const {
  if (const AddedToken* t = added_.find_by_content(token)) return t->id;
  const auto& vocab = model_->vocab();
  auto it = vocab.find(std::string(token));
  if (it == vocab.end()) return std::nullopt;
  return it->second;
}

}  // namespace zt::data
