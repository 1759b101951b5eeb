// BPE merges over one word: symbols in a linked list, candidate merges in a min-heap on
// (rank, position); a popped candidate whose pair has changed since it was pushed is skipped.
#include "zerotrain/data/bpe_model.h"

#include <algorithm>

#include "zerotrain/core/error.h"
#include "zerotrain/data/byte_level.h"
#include "zerotrain/data/utf8.h"

namespace zt::data {
namespace {
constexpr size_t kMaxCachedWord = 256;  // longer words are rare and would only bloat the cache
}  // namespace

std::string byte_token_spelling(uint8_t byte) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  return std::string{'<', '0', 'x', kHex[byte >> 4], kHex[byte & 15], '>'};
}

const std::vector<uint32_t>* BpeCache::find(std::string_view word) const {
  auto it = map_.find(word);
  return it == map_.end() ? nullptr : &it->second;
}

void BpeCache::insert(std::string_view word, std::vector<uint32_t> ids) {
  if (map_.size() >= max_entries_) map_.clear();
  map_.emplace(std::string(word), std::move(ids));
}

BpeModel::BpeModel(std::unordered_map<std::string, uint32_t> vocab,
                   const std::vector<std::pair<std::string, std::string>>& merges,
                   BpeOptions options)
    : vocab_(std::move(vocab)), options_(std::move(options)) {
  if (options_.byte_fallback && options_.alphabet != BpeAlphabet::Text)
    throw ValueError("bpe", "byte_fallback needs a text vocabulary (not a byte-level one)");
  const bool byte_level = options_.alphabet == BpeAlphabet::ByteLevel;
  for (int b = 0; b < 256; ++b) {
    const std::string spelling = byte_level ? to_byte_level(std::string(1, static_cast<char>(b)))
                                            : byte_token_spelling(static_cast<uint8_t>(b));
    auto it = vocab_.find(spelling);
    const bool usable = byte_level || options_.byte_fallback;
    byte_ids_[b] = it == vocab_.end() || !usable ? -1 : int64_t{it->second};
  }
  if (options_.unk_token) {
    auto it = vocab_.find(*options_.unk_token);
    if (it == vocab_.end())
      throw ValueError("bpe",
                       str("unk_token \"", *options_.unk_token, "\" is not in the vocabulary"));
    unk_id_ = it->second;
  }
  if (options_.ignore_merges && byte_level) {
    for (const auto& [spelling, id] : vocab_)
      if (auto raw = from_byte_level(spelling)) raw_vocab_.emplace(std::move(*raw), id);
  }
  merges_.reserve(merges.size());
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    // Named references, not a structured binding: clang 14 (the fuzz build) cannot capture one.
    const std::string& left = merges[rank].first;
    const std::string& right = merges[rank].second;
    auto id_of = [&](const std::string& token) {
      auto it = vocab_.find(token);
      if (it == vocab_.end())
        throw ValueError("bpe", str("merges[", rank, "] \"", left, " ", right, "\": \"", token,
                                    "\" is not in the vocabulary"));
      return it->second;
    };
    const uint32_t a = id_of(left), b = id_of(right), merged = id_of(left + right);
    // A repeated pair takes its last rank, as in `tokenizers` (its merge map is collected in
    // order).
    merges_.insert_or_assign(pair_key(a, b), Merge{static_cast<uint32_t>(rank), merged});
  }
  split_at_meta_space_ = merges_stop_at_meta_space();
}

void BpeModel::initial_symbols(std::string_view word, std::vector<uint32_t>& ids) const {
  if (options_.alphabet == BpeAlphabet::Text) {
    initial_text_symbols(word, ids);
    return;
  }
  // One symbol per byte; bytes outside the vocabulary become unk (fused when asked) or vanish.
  bool pending_unk = false;
  for (char c : word) {
    const int64_t id = byte_ids_[static_cast<unsigned char>(c)];
    if (id >= 0) {
      if (pending_unk) ids.push_back(*unk_id_);
      pending_unk = false;
      ids.push_back(static_cast<uint32_t>(id));
    } else if (unk_id_) {
      if (pending_unk && !options_.fuse_unk) ids.push_back(*unk_id_);
      pending_unk = true;
    }
  }
  if (pending_unk) ids.push_back(*unk_id_);
}

void BpeModel::initial_text_symbols(std::string_view word, std::vector<uint32_t>& ids) const {
  // One symbol per character; a character outside the vocabulary becomes its byte tokens when all
  // exist, else unk (fused when asked) or nothing. As in `tokenizers`, byte tokens do not end a
  // pending unk run: that unk lands after them.
  bool pending_unk = false;
  std::string character;
  for (size_t i = 0; i < word.size();) {
    const size_t len = decode_utf8(word, i).len;
    character.assign(word.substr(i, len));
    i += len;
    if (auto it = vocab_.find(character); it != vocab_.end()) {
      if (pending_unk) ids.push_back(*unk_id_);
      pending_unk = false;
      ids.push_back(it->second);
      continue;
    }
    const bool all_bytes_known =
        options_.byte_fallback && std::all_of(character.begin(), character.end(), [&](char b) {
          return byte_ids_[static_cast<unsigned char>(b)] >= 0;
        });
    if (all_bytes_known) {
      for (char b : character)
        ids.push_back(static_cast<uint32_t>(byte_ids_[static_cast<unsigned char>(b)]));
    } else if (unk_id_) {
      if (pending_unk && !options_.fuse_unk) ids.push_back(*unk_id_);
      pending_unk = true;
    }
  }
  if (pending_unk) ids.push_back(*unk_id_);
}

const BpeModel::Merge* BpeModel::find_merge(uint32_t a, uint32_t b) const {
  auto it = merges_.find(pair_key(a, b));
  return it == merges_.end() ? nullptr : &it->second;
}

bool BpeModel::merges_stop_at_meta_space() const {
  if (options_.alphabet != BpeAlphabet::Text || options_.ignore_merges ||
      !vocab_.contains(std::string(kMetaSpace)))
    return false;
  std::unordered_map<uint32_t, std::string_view> spelling;
  for (const auto& [token, id] : vocab_)
    spelling.emplace(id, token);
  for (const auto& [pair, merge] : merges_) {
    const std::string_view left = spelling[static_cast<uint32_t>(pair >> 32)];
    const std::string_view right = spelling[static_cast<uint32_t>(pair)];
    if (!left.ends_with(kMetaSpace) && right.starts_with(kMetaSpace)) return false;
  }
  return true;
}

void BpeModel::encode_word(std::string_view word, std::vector<uint32_t>& out,
                           BpeCache* cache) const {
  if (!split_at_meta_space_) {
    encode_piece(word, out, cache);
    return;
  }
  // See [Note: BPE pieces at meta spaces].
  size_t begin = 0;
  for (size_t pos = word.find(kMetaSpace, 1); pos != std::string_view::npos;
       pos = word.find(kMetaSpace, pos + kMetaSpace.size())) {
    if (word.substr(0, pos).ends_with(kMetaSpace)) continue;  // inside a run
    encode_piece(word.substr(begin, pos - begin), out, cache);
    begin = pos;
  }
  encode_piece(word.substr(begin), out, cache);
}

void BpeModel::encode_piece(std::string_view word, std::vector<uint32_t>& out,
                            BpeCache* cache) const {
  if (word.empty()) return;
  if (options_.ignore_merges) {
    const auto& whole = options_.alphabet == BpeAlphabet::ByteLevel ? raw_vocab_ : vocab_;
    if (auto it = whole.find(std::string(word)); it != whole.end()) {
      out.push_back(it->second);
      return;
    }
  }
  if (cache && word.size() < kMaxCachedWord) {
    if (const auto* hit = cache->find(word)) {
      out.insert(out.end(), hit->begin(), hit->end());
      return;
    }
    std::vector<uint32_t> ids;
    merge_word(word, ids);
    out.insert(out.end(), ids.begin(), ids.end());
    cache->insert(word, std::move(ids));
    return;
  }
  merge_word(word, out);
}

void BpeModel::merge_word(std::string_view word, std::vector<uint32_t>& out) const {
  struct Symbol {
    uint32_t id;
    int32_t prev, next;
    bool alive;
  };
  struct Candidate {
    uint32_t rank;
    int32_t pos;
    uint32_t new_id;
    // std::push_heap builds a max-heap: "greater" pops the lowest rank, then the leftmost position.
    bool operator<(const Candidate& o) const {
      return rank != o.rank ? rank > o.rank : pos > o.pos;
    }
  };

  std::vector<uint32_t> ids;
  initial_symbols(word, ids);
  std::vector<Symbol> symbols;
  symbols.reserve(ids.size());
  for (uint32_t id : ids) {
    const auto n = static_cast<int32_t>(symbols.size());
    if (n > 0) symbols.back().next = n;
    symbols.push_back({id, n - 1, -1, true});
  }

  std::vector<Candidate> heap;
  auto push = [&](int32_t pos) {
    const Symbol& s = symbols[pos];
    if (const Merge* m = find_merge(s.id, symbols[s.next].id)) {
      heap.push_back({m->rank, pos, m->new_id});
      std::push_heap(heap.begin(), heap.end());
    }
  };
  for (int32_t i = 0; i + 1 < static_cast<int32_t>(symbols.size()); ++i)
    push(i);

  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end());
    const Candidate top = heap.back();
    heap.pop_back();
    Symbol& left = symbols[top.pos];
    if (!left.alive || left.next < 0) continue;
    Symbol& right = symbols[left.next];
    const Merge* current = find_merge(left.id, right.id);
    if (!current || current->new_id != top.new_id) continue;  // stale candidate

    left.id = top.new_id;
    right.alive = false;
    left.next = right.next;
    if (left.next >= 0) symbols[left.next].prev = top.pos;
    if (left.prev >= 0) push(left.prev);
    if (left.next >= 0) push(top.pos);
  }
  for (const Symbol& s : symbols)
    if (s.alive) out.push_back(s.id);
}

}  // namespace zt::data
