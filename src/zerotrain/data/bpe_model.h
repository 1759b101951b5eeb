// The BPE model: a vocabulary and a ranked list of merges, applied to one pre-tokenized word the
// way Hugging Face `tokenizers` does (its BPE::merge_word): the word starts as one symbol per byte
// (byte-level vocabularies, GPT-2 style) or per character (SentencePiece-style vocabularies, where
// a character outside the vocabulary becomes its <0xXX> byte tokens with byte_fallback), and the
// pair with the lowest merge rank (leftmost on ties) is merged until no pair has a merge, with a
// priority queue over (rank, position). Tested in tests/data/test_bpe_model.cpp and
// against `tokenizers` through the tokenizer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace zt::data {

// How the vocabulary spells text: through GPT-2's byte-level alphabet (byte_level.h), or as the
// text itself (SentencePiece-style, "▁" for a space).
enum class BpeAlphabet { ByteLevel, Text };

struct BpeOptions {
  BpeAlphabet alphabet = BpeAlphabet::ByteLevel;
  bool byte_fallback = false;  // Text only: an unknown character becomes its <0xXX> byte tokens
  std::optional<std::string> unk_token;  // for bytes whose symbol is not in the vocabulary
  bool fuse_unk = false;                 // consecutive unknown bytes give one unk token
  bool ignore_merges = false;            // a word that is a vocabulary entry is that one token
};

// The spelling of a byte's fallback token, "<0x0A>" for 10 (SentencePiece's, upper-case hex).
std::string byte_token_spelling(uint8_t byte);

// Memo of word -> ids. Encoding is a pure function of the word, so a cache never changes results;
// it only makes repeated words cheap. One per thread; it empties itself when full.
class BpeCache {
 public:
  explicit BpeCache(size_t max_entries = 1 << 20) : max_entries_(max_entries) {}
  const std::vector<uint32_t>* find(std::string_view word) const;
  void insert(std::string_view word, std::vector<uint32_t> ids);
  size_t size() const { return map_.size(); }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  size_t max_entries_;
  std::unordered_map<std::string, std::vector<uint32_t>, Hash, std::equal_to<>> map_;
};

class BpeModel {
 public:
  // `vocab`: spelling -> id; `merges`: (left, right) spellings in rank order. Throws
  // ValueError naming the entry when a merge's parts or result are not in the vocabulary.
  BpeModel(std::unordered_map<std::string, uint32_t> vocab,
           const std::vector<std::pair<std::string, std::string>>& merges, BpeOptions options = {});

  // Appends the ids of one word (raw bytes). `cache` may be null.
  void encode_word(std::string_view word, std::vector<uint32_t>& out, BpeCache* cache) const;

  const std::unordered_map<std::string, uint32_t>& vocab() const { return vocab_; }
  size_t num_merges() const { return merges_.size(); }
  // Whether encode_word works piece by piece, see [Note: BPE pieces at meta spaces].
  bool splits_at_meta_space() const { return split_at_meta_space_; }

 private:
  struct Merge {
    uint32_t rank;
    uint32_t new_id;
  };
  static uint64_t pair_key(uint32_t a, uint32_t b) { return (uint64_t{a} << 32) | b; }
  bool merges_stop_at_meta_space() const;
  void encode_piece(std::string_view word, std::vector<uint32_t>& out, BpeCache* cache) const;
  const Merge* find_merge(uint32_t a, uint32_t b) const;
  void merge_word(std::string_view word, std::vector<uint32_t>& out) const;
  // The word's symbols before any merge: one per byte (byte-level) or per character (text).
  void initial_symbols(std::string_view word, std::vector<uint32_t>& ids) const;
  void initial_text_symbols(std::string_view word, std::vector<uint32_t>& ids) const;

  std::unordered_map<std::string, uint32_t> vocab_;  // spelling -> id
  std::unordered_map<std::string, uint32_t>
      raw_vocab_;  // raw bytes -> id (byte-level ignore_merges)
  std::unordered_map<uint64_t, Merge> merges_;
  // Byte-level: the id of each byte's symbol; text with byte_fallback: the id of its <0xXX> token;
  // -1 when not in the vocabulary.
  int64_t byte_ids_[256];
  std::optional<uint32_t> unk_id_;
  BpeOptions options_;
  bool split_at_meta_space_ = false;
};

// SentencePiece's meta space "▁" (U+2581), which stands for a space in text vocabularies.
inline constexpr std::string_view kMetaSpace = "\xE2\x96\x81";

// [Note: BPE pieces at meta spaces]
// A SentencePiece-style tokenizer without a splitting pre-tokenizer (Llama 2's layout, Mistral's
// Metaspace with split false) hands BPE a whole text as one word, which `tokenizers` merges as a
// whole and which no word cache helps. When no merge (L, R) has an R that starts with "▁" and an L
// that does not end with one, no merge can ever join the symbols on either side of the start of a
// run of "▁" that follows another character, so the word's merges are exactly those of its pieces
// cut there (the run stays with the text after it): within a piece the same pairs meet in the same
// rank and position order. "▁" must be a vocabulary token (else unknown-character handling could
// cross the cut) and ignore_merges off (it looks the whole word up). BpeModel checks this once and
// then encodes piece by piece, each piece through the cache: equal ids, several times faster on
// real text. Trained SentencePiece vocabularies (Llama 2, Mistral) meet the condition.

}  // namespace zt::data
