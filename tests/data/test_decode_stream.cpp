// Streaming decode: the pieces handed out token by token join to the decode of the whole
// sequence, for the byte-level BPE of the default job and the SentencePiece-style fixture (whose
// decoder strips the first space), over text with multi-byte characters split across tokens;
// no piece carries the replacement character of a character still incomplete; special tokens
// are left out with skip_special_tokens; with clean-up, transformers' clean_up_tokenization of
// the whole text, also when a later token removes the space before it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "data/tokenizer_fixtures.h"
#include "zerotrain/data/decode_stream.h"
#include "zerotrain/data/tokenizer.h"

namespace zt {
namespace {

const std::string kText =
    "Über allen Gipfeln ist Ruh, 狐 and the quick brown fox. Ελληνικά! Ünïcödé 🙂 "
    "done";

struct Streamed {
  std::vector<std::string> pieces;
  std::string joined;
};

Streamed stream(const data::Tokenizer& tok, const std::vector<uint32_t>& ids, bool skip,
                bool clean = false) {
  data::DecodeStream s(tok, skip, clean);
  Streamed out;
  for (uint32_t id : ids) {
    out.pieces.push_back(s.push(id));
    out.joined += out.pieces.back();
  }
  out.pieces.push_back(s.finish());
  out.joined += out.pieces.back();
  return out;
}

void expect_streams_whole_text(const data::Tokenizer& tok, const std::string& what) {
  const std::vector<uint32_t> ids = tok.encode(kText);
  const Streamed s = stream(tok, ids, false);
  EXPECT_EQ(s.joined, tok.decode(ids)) << what;
  for (const std::string& piece : s.pieces)
    EXPECT_EQ(piece.find("\xEF\xBF\xBD"), std::string::npos) << what << ": piece " << piece;
  // Several tokens per multi-byte character: some pushes hand out nothing.
  size_t empty = 0;
  for (size_t i = 0; i + 1 < s.pieces.size(); ++i)
    empty += s.pieces[i].empty();
  EXPECT_GT(empty, 0u) << what;
}

TEST(DecodeStream, ByteLevelPiecesJoinToTheWholeDecode) {
  expect_streams_whole_text(data::Tokenizer::from_file(test::kjv_tokenizer_path()), "kjv");
}

TEST(DecodeStream, SentencePiecePiecesJoinToTheWholeDecode) {
  const data::Tokenizer tok =
      data::Tokenizer::from_file(test::sentencepiece_bpe_dir() / "tokenizer.json");
  expect_streams_whole_text(tok, "sentencepiece");
  // The decoder strips the sequence's first space: so does the stream.
  const Streamed s = stream(tok, tok.encode(" Hello world"), false);
  EXPECT_EQ(s.joined, tok.decode(tok.encode(" Hello world")));
}

TEST(DecodeStream, SkipsSpecialTokens) {
  const data::Tokenizer tok = data::Tokenizer::from_file(test::kjv_tokenizer_path());
  std::vector<uint32_t> ids = tok.encode("And God said");
  ids.push_back(*tok.token_to_id("<|endoftext|>"));
  EXPECT_EQ(stream(tok, ids, true).joined, "And God said");
  EXPECT_EQ(stream(tok, ids, false).joined, "And God said<|endoftext|>");
}

TEST(DecodeStream, CleanUpAsTransformers) {
  // The expected strings are Python's chain of str.replace calls in transformers 4.46.
  EXPECT_EQ(data::clean_up_tokenization("Hello , world . Is it ? Yes ! I 'm sure it 's ok"),
            "Hello, world. Is it? Yes! I'm sure it's ok");
  EXPECT_EQ(data::clean_up_tokenization("do n't , we 've , they 're , a ' b"),
            "don't, we've, they're, a'b");
  EXPECT_EQ(data::clean_up_tokenization("no change here."), "no change here.");
  const data::Tokenizer tok = data::Tokenizer::from_file(test::kjv_tokenizer_path());
  for (const std::string text : {"And God said , Let there be light : and there was light .",
                                 "a ' b and c ' d ! e ' s end ' ", "x , y ,z . . ."}) {
    const std::vector<uint32_t> ids = tok.encode(text);
    const Streamed s = stream(tok, ids, false, true);
    EXPECT_EQ(s.joined, data::clean_up_tokenization(tok.decode(ids))) << text;
  }
}

}  // namespace
}  // namespace zt
