// The hand-written GPT-2 split against the pieces the regex gives (the expected pieces here follow
// the pattern's first-match semantics; the tokenizer fixtures check it against `tokenizers` too).
#include <gtest/gtest.h>

#include <random>

#include "zerotrain/data/gpt2_split.h"

namespace zt::data {
namespace {

using Pieces = std::vector<std::string_view>;

void expect_split(std::string_view text, const Pieces& expected) {
  EXPECT_EQ(gpt2_split(text), expected) << "text: \"" << text << "\"";
}

TEST(Gpt2Split, WordsNumbersAndPunctuation) {
  expect_split("Hello world", {"Hello", " world"});
  expect_split("Hello world!", {"Hello", " world", "!"});
  expect_split("abc123 456def", {"abc", "123", " 456", "def"});
  expect_split("a, b... (c)", {"a", ",", " b", "...", " (", "c", ")"});
  expect_split("x86_64", {"x", "86", "_", "64"});
  expect_split("café 日本語", {"café", " 日本語"});
  expect_split("emoji 🙂🙂!", {"emoji", " 🙂🙂!"});
}

TEST(Gpt2Split, ContractionsAreLowerCaseOnly) {
  expect_split("I'm we're they've he'd it's can't we'll",
               {"I", "'m", " we", "'re", " they", "'ve", " he", "'d", " it", "'s", " can", "'t",
                " we", "'ll"});
  expect_split("I'M", {"I", "'", "M"});
  expect_split("x?'s", {"x", "?'", "s"});
  expect_split(" 's", {" '", "s"});
  expect_split("'", {"'"});
  expect_split("'r", {"'", "r"});
}

TEST(Gpt2Split, WhiteSpaceKeepsItsLastSpaceForTheNextWord) {
  expect_split("a  b", {"a", " ", " b"});
  expect_split("a   b", {"a", "  ", " b"});
  expect_split("a \t b", {"a", " \t", " b"});
  expect_split("a\n\nb", {"a", "\n", "\n", "b"});
  expect_split("a\tb", {"a", "\t", "b"});
  expect_split("  a", {" ", " a"});
  expect_split("a  ", {"a", "  "});
  expect_split("a \n", {"a", " \n"});
  expect_split("   ", {"   "});
  expect_split("x\xE3\x80\x80\xE3\x80\x80y", {"x", "\xE3\x80\x80", "\xE3\x80\x80", "y"});  // U+3000
  expect_split("x \xE2\x80\xA8y", {"x", " ", "\xE2\x80\xA8", "y"});  // U+2028 is not ' '
}

TEST(Gpt2Split, InvalidUtf8BytesAreOtherCharacters) {
  expect_split("a\xFF\xFE b", {"a", "\xFF\xFE", " b"});
  expect_split(" \x80x", {" \x80", "x"});
}

TEST(Gpt2Split, PiecesCoverRandomText) {
  const std::vector<std::string> atoms = {"a",  "Z",    "7",        " ",    "  ", "\n",
                                          "\t", "'",    "'s",       "!",    "é",  "日",
                                          "²",  "🙂", "\xC2\xA0", "\xFF", "_"};
  std::mt19937 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    std::string text;
    const int n = static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i)
      text += atoms[rng() % atoms.size()];
    std::string joined;
    for (std::string_view p : gpt2_split(text)) {
      EXPECT_FALSE(p.empty());
      joined += p;
    }
    EXPECT_EQ(joined, text);
  }
}

}  // namespace
}  // namespace zt::data
