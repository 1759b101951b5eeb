// Added-token matching: leftmost-longest, the two passes, single_word, lstrip and rstrip.
#include <gtest/gtest.h>

#include "zerotrain/data/tokenizer_added_tokens.h"

namespace zt::data {
namespace {

AddedToken token(uint32_t id, std::string content, bool normalized = false) {
  AddedToken t;
  t.id = id;
  t.content = std::move(content);
  t.normalized = normalized;
  t.special = !normalized;
  return t;
}

// Segments written as "text" for plain text and "#id" for added tokens.
std::vector<std::string> show(const AddedVocabulary& v, std::string_view text) {
  std::vector<std::string> out;
  size_t expected_begin = 0;
  for (const TextSegment& s : v.split(text)) {
    EXPECT_EQ(s.begin, expected_begin) << "segments must tile the text";
    expected_begin = s.end;
    if (s.id) {
      std::string label(1, '#');
      label += std::to_string(*s.id);
      out.push_back(label);
    } else {
      out.emplace_back(text.substr(s.begin, s.end - s.begin));
    }
  }
  EXPECT_EQ(expected_begin, text.size());
  return out;
}

using Strings = std::vector<std::string>;

TEST(AddedTokens, LeftmostLongestMatch) {
  AddedVocabulary v({token(1, "<|im"), token(2, "<|im_start|>"), token(3, "<|endoftext|>")});
  EXPECT_EQ(show(v, "a<|im_start|>b<|im c"), (Strings{"a", "#2", "b", "#1", " c"}));
  EXPECT_EQ(show(v, "<|endoftext|><|endoftext|>"), (Strings{"#3", "#3"}));
  EXPECT_EQ(show(v, "no tokens here"), (Strings{"no tokens here"}));
  EXPECT_EQ(show(v, ""), Strings{});
}

TEST(AddedTokens, NormalizedTokensMatchInASecondPass) {
  // The special "ab" pass runs first over the whole text; "xabx" (normalized) only sees the rest.
  AddedVocabulary v({token(1, "ab"), token(2, "xabx", true)});
  EXPECT_EQ(show(v, "1xabx2"), (Strings{"1x", "#1", "x2"}));
  EXPECT_EQ(show(v, "xaxbx"), (Strings{"xaxbx"}));
  AddedVocabulary w({token(2, "cd", true)});
  EXPECT_EQ(show(w, "acdb"), (Strings{"a", "#2", "b"}));
}

TEST(AddedTokens, SingleWordNeedsNonWordNeighbours) {
  AddedToken t = token(7, "zt-word", true);
  t.single_word = true;
  AddedVocabulary v({t});
  EXPECT_EQ(show(v, "zt-word, (zt-word)"), (Strings{"#7", ", (", "#7", ")"}));
  EXPECT_EQ(show(v, "xzt-word zt-wordy zt-word_"), (Strings{"xzt-word zt-wordy zt-word_"}));
  EXPECT_EQ(show(v, "é zt-word é"), (Strings{"é ", "#7", " é"}));
  EXPECT_EQ(show(v, "ézt-word"), (Strings{"ézt-word"}));
}

TEST(AddedTokens, LstripAndRstripSwallowWhiteSpace) {
  AddedToken t = token(9, "<|user|>");
  t.lstrip = true;
  t.rstrip = true;
  AddedVocabulary v({t});
  EXPECT_EQ(show(v, "a \t <|user|>\n b"), (Strings{"a", "#9", "b"}));
  EXPECT_EQ(show(v, "<|user|><|user|>"), (Strings{"#9", "#9"}));
  // A match's lstrip cannot reach back into the previous match's rstrip.
  EXPECT_EQ(show(v, "<|user|>  <|user|>x"), (Strings{"#9", "#9", "x"}));
  AddedToken l = token(4, "[M]");
  l.lstrip = true;
  EXPECT_EQ(show(AddedVocabulary({l}), "a  [M]  b"), (Strings{"a", "#4", "  b"}));
}

TEST(AddedTokens, LookupByIdAndContent) {
  AddedVocabulary v({token(3, "<|endoftext|>"), token(4, "", false)});
  EXPECT_EQ(v.tokens().size(), 1u);  // empty contents are dropped, as `tokenizers` drops them,
  EXPECT_EQ(v.empty_content_ids(), std::vector<uint32_t>{4});  // and kept to warn about
  ASSERT_NE(v.find_by_id(3), nullptr);
  EXPECT_EQ(v.find_by_id(3)->content, "<|endoftext|>");
  EXPECT_EQ(v.find_by_content("<|endoftext|>")->id, 3u);
  EXPECT_EQ(v.find_by_id(4), nullptr);
}

}  // namespace
}  // namespace zt::data
