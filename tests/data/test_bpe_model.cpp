// The BPE merge loop on hand-made vocabularies: rank order, unknown bytes, ignore_merges, caching.
#include <gtest/gtest.h>

#include "zerotrain/core/error.h"
#include "zerotrain/data/bpe_model.h"

namespace zt::data {
namespace {

using Merges = std::vector<std::pair<std::string, std::string>>;

// Single letters a..z get ids 0..25; `extra` tokens follow in order.
std::unordered_map<std::string, uint32_t> letters_plus(const std::vector<std::string>& extra) {
  std::unordered_map<std::string, uint32_t> v;
  for (char c = 'a'; c <= 'z'; ++c)
    v[std::string(1, c)] = static_cast<uint32_t>(c - 'a');
  uint32_t id = 26;
  for (const auto& t : extra)
    v[t] = id++;
  return v;
}

std::vector<uint32_t> encode(const BpeModel& m, std::string_view word, BpeCache* cache = nullptr) {
  std::vector<uint32_t> out;
  m.encode_word(word, out, cache);
  return out;
}

TEST(BpeModel, MergesByRank) {
  // The example of `tokenizers`' own tests: "unrelated" merges all the way up.
  const auto vocab = letters_plus({"re", "at", "ed", "un", "ated", "rel", "related", "unrelated"});
  const Merges merges = {{"r", "e"},   {"a", "t"},  {"e", "d"},      {"u", "n"},
                         {"at", "ed"}, {"re", "l"}, {"rel", "ated"}, {"un", "related"}};
  BpeModel m(vocab, merges);
  EXPECT_EQ(encode(m, "unrelated"), (std::vector<uint32_t>{vocab.at("unrelated")}));
  EXPECT_EQ(encode(m, "relate"),
            (std::vector<uint32_t>{vocab.at("rel"), vocab.at("at"), vocab.at("e")}));
  EXPECT_EQ(encode(m, "xyz"), (std::vector<uint32_t>{23, 24, 25}));
  EXPECT_EQ(m.num_merges(), merges.size());
}

TEST(BpeModel, LowerRankWinsThenLeftmost) {
  const auto vocab = letters_plus({"ab", "bc", "aa"});
  // "bc" outranks "ab": in "abc" the right pair merges first.
  EXPECT_EQ(encode(BpeModel(vocab, {{"b", "c"}, {"a", "b"}}), "abc"),
            (std::vector<uint32_t>{0, vocab.at("bc")}));
  EXPECT_EQ(encode(BpeModel(vocab, {{"a", "b"}, {"b", "c"}}), "abc"),
            (std::vector<uint32_t>{vocab.at("ab"), 2}));
  // Equal pairs merge from the left: "aaa" -> "aa" + "a".
  EXPECT_EQ(encode(BpeModel(vocab, {{"a", "a"}}), "aaa"),
            (std::vector<uint32_t>{vocab.at("aa"), 0}));
}

TEST(BpeModel, RepeatedMergeTakesItsLastRank) {
  const auto vocab = letters_plus({"ab", "bc"});
  // ("a","b") listed at ranks 0 and 2: rank 2 applies, so "bc" (rank 1) merges first.
  BpeModel m(vocab, {{"a", "b"}, {"b", "c"}, {"a", "b"}});
  EXPECT_EQ(encode(m, "abc"), (std::vector<uint32_t>{0, vocab.at("bc")}));
}

TEST(BpeModel, UnknownBytesVanishOrBecomeUnk) {
  std::unordered_map<std::string, uint32_t> vocab = {{"a", 0}, {"b", 1}, {"<unk>", 2}};
  EXPECT_EQ(encode(BpeModel(vocab, {}), "acb"), (std::vector<uint32_t>{0, 1}));
  BpeOptions unk;
  unk.unk_token = "<unk>";
  EXPECT_EQ(encode(BpeModel(vocab, {}, unk), "accb"), (std::vector<uint32_t>{0, 2, 2, 1}));
  unk.fuse_unk = true;
  EXPECT_EQ(encode(BpeModel(vocab, {}, unk), "accb"), (std::vector<uint32_t>{0, 2, 1}));
  EXPECT_EQ(encode(BpeModel(vocab, {}, unk), "cc"), (std::vector<uint32_t>{2}));
}

TEST(BpeModel, IgnoreMergesTakesWholeWordsFromTheVocabulary) {
  // "abc" is in the vocabulary but no merge chain reaches it.
  const auto vocab = letters_plus({"ab", "abc"});
  BpeOptions opt;
  EXPECT_EQ(encode(BpeModel(vocab, {{"a", "b"}}, opt), "abc"),
            (std::vector<uint32_t>{vocab.at("ab"), 2}));
  opt.ignore_merges = true;
  BpeModel m(vocab, {{"a", "b"}}, opt);
  EXPECT_EQ(encode(m, "abc"), (std::vector<uint32_t>{vocab.at("abc")}));
  EXPECT_EQ(encode(m, "abcd"), (std::vector<uint32_t>{vocab.at("ab"), 2, 3}));
}

TEST(BpeModel, ByteLevelSpellingsCoverSpacesAndHighBytes) {
  // "Ġ" (U+0120) spells the space byte, "Ã©" spells the bytes of "é".
  std::unordered_map<std::string, uint32_t> vocab = {{"\xC4\xA0", 0},
                                                     {"a", 1},
                                                     {"\xC4\xA0"
                                                      "a",
                                                      2},
                                                     {"\xC3\x83", 3},
                                                     {"\xC2\xA9", 4},
                                                     {"\xC3\x83\xC2\xA9", 5}};
  BpeModel m(vocab, {{"\xC4\xA0", "a"}, {"\xC3\x83", "\xC2\xA9"}});
  EXPECT_EQ(encode(m, " a"), (std::vector<uint32_t>{2}));
  EXPECT_EQ(encode(m, "\xC3\xA9"), (std::vector<uint32_t>{5}));  // é
}

TEST(BpeModel, CacheNeverChangesResults) {
  const auto vocab = letters_plus({"th", "the", "he"});
  BpeModel m(vocab, {{"t", "h"}, {"th", "e"}, {"h", "e"}});
  BpeCache cache(4);
  for (int round = 0; round < 3; ++round)
    for (const char* w : {"the", "then", "hen", "ether", "theme", "a"})
      EXPECT_EQ(encode(m, w, &cache), encode(m, w)) << w;
  EXPECT_LE(cache.size(), 4u);
  EXPECT_EQ(encode(m, "", &cache), std::vector<uint32_t>{});
}

TEST(BpeModel, RejectsMergesOutsideTheVocabulary) {
  const auto vocab = letters_plus({"ab"});
  try {
    BpeModel m(vocab, {{"a", "b"}, {"b", "c"}});
    FAIL() << "expected an error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("merges[1] \"b c\": \"bc\" is not in the vocabulary"),
              std::string::npos)
        << e.what();
  }
  BpeOptions opt;
  opt.unk_token = "<unk>";
  EXPECT_THROW(BpeModel(vocab, {}, opt), ValueError);
}

}  // namespace
}  // namespace zt::data
