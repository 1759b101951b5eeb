// The byte-level BPE model: a vocabulary of byte-level spelled tokens and a ranked list of merges,
// applied to one pre-tokenized word the way Hugging Face `tokenizers` does (its BPE::merge_word):
// the word starts as one symbol per byte, and the pair with the lowest merge rank (leftmost on
// ties) is merged until no pair has a merge, with a priority queue over (rank, position).
// Tested in tests/data_pipeline/test_bpe_model.cpp and against `tokenizers` through the tokenizer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace zt::data {

struct BpeOptions {
  std::optional<std::string> unk_token;  // for bytes whose symbol is not in the vocabulary
  bool fuse_unk = false;                 // consecutive unknown bytes give one unk token
  bool ignore_merges = false;            // a word that is a vocabulary entry is that one token
};

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
  // `vocab`: byte-level spelling -> id; `merges`: (left, right) spellings in rank order. Throws
  // ValueError naming the entry when a merge's parts or result are not in the vocabulary.
  BpeModel(std::unordered_map<std::string, uint32_t> vocab,
           const std::vector<std::pair<std::string, std::string>>& merges, BpeOptions options = {});

  // Appends the ids of one word (raw bytes). `cache` may be null.
  void encode_word(std::string_view word, std::vector<uint32_t>& out, BpeCache* cache) const;

  const std::unordered_map<std::string, uint32_t>& vocab() const { return vocab_; }
  size_t num_merges() const { return merges_.size(); }

 private:
  struct Merge {
    uint32_t rank;
    uint32_t new_id;
  };
  static uint64_t pair_key(uint32_t a, uint32_t b) { return (uint64_t{a} << 32) | b; }
  const Merge* find_merge(uint32_t a, uint32_t b) const;
  void merge_word(std::string_view word, std::vector<uint32_t>& out) const;

  std::unordered_map<std::string, uint32_t> vocab_;      // byte-level spelling -> id
  std::unordered_map<std::string, uint32_t> raw_vocab_;  // raw bytes -> id (for ignore_merges)
  std::unordered_map<uint64_t, Merge> merges_;
  int64_t byte_ids_[256];  // id of each single byte's symbol, -1 when not in the vocabulary
  std::optional<uint32_t> unk_id_;
  BpeOptions options_;
};

}  // namespace zt::data
