// The parts of SentencePiece-style BPE on their own, on cases the fixtures may not reach: the
// normalizers, the Metaspace split, each decoder step, byte fallback in the BPE model (with the
// `tokenizers` order of a pending unk), and the errors of the tokenizer.json reader for this
// family.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "zerotrain/data/bpe_model.h"
#include "zerotrain/data/metaspace.h"
#include "zerotrain/data/normalizer.h"
#include "zerotrain/data/token_decoder.h"
#include "zerotrain/data/tokenizer.h"

namespace zt::data {
namespace {

using nlohmann::json;
using Strings = std::vector<std::string>;

const std::string kMeta = "\xE2\x96\x81";  // ▁

TEST(SentencePieceNormalizer, PrependsToNonEmptyTextThenReplaces) {
  const Normalizer n(
      {{NormalizerStep::Kind::Prepend, "", kMeta}, {NormalizerStep::Kind::Replace, " ", kMeta}});
  EXPECT_EQ(n.apply("Hello  world"), kMeta + "Hello" + kMeta + kMeta + "world");
  EXPECT_EQ(n.apply(""), "");
  EXPECT_EQ(n.apply(" "), kMeta + kMeta);
  EXPECT_EQ(replace_all("aaa", "aa", "b"), "ba");  // non-overlapping, left to right
  EXPECT_THROW(Normalizer({{NormalizerStep::Kind::Replace, "", "x"}}), ValueError);
}

TEST(SentencePieceMetaspace, PrependSchemes) {
  MetaspaceOptions m;
  m.split = false;
  m.prepend_scheme = PrependScheme::Always;
  EXPECT_EQ(metaspace_words("a b", false, m), Strings{kMeta + "a" + kMeta + "b"});
  EXPECT_EQ(metaspace_words(" a", false, m), Strings{kMeta + "a"});  // already starts with one
  m.prepend_scheme = PrependScheme::First;
  EXPECT_EQ(metaspace_words("a", true, m), Strings{kMeta + "a"});
  EXPECT_EQ(metaspace_words("a", false, m), Strings{"a"});
  m.prepend_scheme = PrependScheme::Never;
  EXPECT_EQ(metaspace_words("a", true, m), Strings{"a"});
}

TEST(SentencePieceMetaspace, SplitKeepsRunsOfMetaSpacesWithTheNextWord) {
  MetaspaceOptions m;
  m.prepend_scheme = PrependScheme::Never;
  EXPECT_EQ(metaspace_words("a  b c", false, m), (Strings{"a", kMeta + kMeta + "b", kMeta + "c"}));
  EXPECT_EQ(metaspace_words("a ", false, m), (Strings{"a", kMeta}));
  EXPECT_EQ(metaspace_words("  ", false, m), (Strings{kMeta + kMeta}));
}

TEST(SentencePieceDecoder, Llama2Sequence) {
  const TokenDecoder d({{DecoderStep::Kind::Replace, kMeta, " "},
                        {DecoderStep::Kind::ByteFallback, "", ""},
                        {DecoderStep::Kind::Fuse, "", ""},
                        {DecoderStep::Kind::Strip, "", " ", 1, 0}});
  EXPECT_EQ(d.decode({kMeta + "Hello", kMeta + "w", "<0xC3>", "<0xA9>", "<0x0a>"}),
            "Hello w\xC3\xA9\n");
  // Bytes that are not valid UTF-8 give one U+FFFD each, and a run ends at any other token.
  EXPECT_EQ(d.decode({"<0xC3>", "x", "<0xE6>", "<0x97>"}), "\xEF\xBF\xBDx\xEF\xBF\xBD\xEF\xBF\xBD");
  // Only one leading space goes; "<0x4G>" and "<0x41" are not byte tokens.
  EXPECT_EQ(d.decode({kMeta + kMeta + "a", "<0x4G>", "<0x41"}), " a<0x4G><0x41");
  EXPECT_EQ(d.decode({}), "");
}

TEST(SentencePieceDecoder, StripAndMetaspace) {
  const TokenDecoder strip({{DecoderStep::Kind::Strip, "", "x", 2, 1}});
  EXPECT_EQ(strip.decode({"xxxaxx", "ax"}), "xaxa");
  // Metaspace drops every meta space of the first token when the encoder prepends one.
  DecoderStep meta{DecoderStep::Kind::Metaspace, kMeta, ""};
  EXPECT_EQ(TokenDecoder({meta}).decode({kMeta + "a" + kMeta, kMeta + "b"}), "a b");
  meta.prepends = false;
  EXPECT_EQ(TokenDecoder({meta}).decode({kMeta + "a", kMeta + "b"}), " a b");
  EXPECT_THROW(TokenDecoder({{DecoderStep::Kind::Strip, "", "ab", 1, 0}}), ValueError);
}

TEST(SentencePieceBpe, ByteFallbackAndUnknownCharacters) {
  std::unordered_map<std::string, uint32_t> vocab = {{"<unk>", 0}, {"a", 1},      {"b", 2},
                                                     {"ab", 3},    {"<0xC3>", 4}, {"<0xA9>", 5}};
  BpeOptions opt;
  opt.alphabet = BpeAlphabet::Text;
  opt.byte_fallback = true;
  opt.unk_token = "<unk>";
  opt.fuse_unk = true;
  const BpeModel model(vocab, {{"a", "b"}}, opt);
  std::vector<uint32_t> ids;
  model.encode_word(
      "ab\xC3\xA9"
      "a",
      ids, nullptr);  // é has both byte tokens
  EXPECT_EQ(ids, (std::vector<uint32_t>{3, 4, 5, 1}));
  // 'ü' (C3 BC) lacks <0xBC>: unk. As in `tokenizers`, byte tokens do not flush a pending unk,
  // so the unk of ü lands after é's bytes; 'zz' fuses into that same unk.
  ids.clear();
  model.encode_word(
      "\xC3\xBC"
      "\xC3\xA9"
      "zz"
      "b",
      ids, nullptr);
  EXPECT_EQ(ids, (std::vector<uint32_t>{4, 5, 0, 2}));
  opt.fuse_unk = false;
  ids.clear();
  BpeModel(vocab, {{"a", "b"}}, opt).encode_word("zz", ids, nullptr);
  EXPECT_EQ(ids, (std::vector<uint32_t>{0, 0}));
  opt.alphabet = BpeAlphabet::ByteLevel;
  EXPECT_THROW(BpeModel(vocab, {}, opt), ValueError);
}

TEST(SentencePieceBpe, PiecesAtMetaSpacesOnlyWhenNoMergeCrossesThem) {
  const std::string m(kMetaSpace);
  std::unordered_map<std::string, uint32_t> vocab = {
      {"a", 0}, {m, 1}, {m + "a", 2}, {"a" + m, 3}, {m + m, 4}};
  BpeOptions opt;
  opt.alphabet = BpeAlphabet::Text;
  const BpeModel safe(vocab, {{m, "a"}, {m, m}}, opt);
  EXPECT_TRUE(safe.splits_at_meta_space());
  std::vector<uint32_t> ids;
  safe.encode_word("a" + m + m + "a" + m + "a", ids, nullptr);
  EXPECT_EQ(ids, (std::vector<uint32_t>{0, 1, 2, 2}));  // "a" "▁" "▁a" "▁a": (▁, a) ranks first
  // ("a", "▁") joins across the start of a run: the word is merged whole.
  const BpeModel crossing(vocab, {{"a", m}, {m, "a"}}, opt);
  EXPECT_FALSE(crossing.splits_at_meta_space());
  ids.clear();
  crossing.encode_word("a" + m + "a", ids, nullptr);
  EXPECT_EQ(ids, (std::vector<uint32_t>{3, 0}));
  opt.ignore_merges = true;
  EXPECT_FALSE(BpeModel(vocab, {{m, "a"}}, opt).splits_at_meta_space());
  vocab.erase(m);
  vocab.erase(m + m);
  opt.ignore_merges = false;
  EXPECT_FALSE(BpeModel(vocab, {}, opt).splits_at_meta_space());
}

json minimal_sentencepiece_config() {
  json vocab = json::object();
  for (const char* t : {"<unk>", "<0x41>", "\xE2\x96\x81", "a",
                        "\xE2\x96\x81"
                        "a"})
    vocab[t] = vocab.size();
  return {{"normalizer",
           {{"type", "Sequence"},
            {"normalizers",
             {{{"type", "Prepend"}, {"prepend", kMeta}},
              {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", kMeta}}}}}},
          {"pre_tokenizer", nullptr},
          {"decoder",
           {{"type", "Sequence"},
            {"decoders",
             {{{"type", "Replace"}, {"pattern", {{"String", kMeta}}}, {"content", " "}},
              {{"type", "ByteFallback"}},
              {{"type", "Fuse"}},
              {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}}},
          {"model",
           {{"type", "BPE"},
            {"unk_token", "<unk>"},
            {"byte_fallback", true},
            {"vocab", vocab},
            {"merges", json::array({kMeta + " a"})}}}};
}

void expect_error(const json& cfg, const std::string& fragment) {
  try {
    Tokenizer::from_json(cfg.dump(), "sp.json");
    ADD_FAILURE() << "expected an error containing: " << fragment;
  } catch (const TokenizerError& e) {
    EXPECT_NE(std::string(e.what()).find("[tokenizer] sp.json: " + fragment), std::string::npos)
        << "message: " << e.what();
  }
}

TEST(SentencePieceJson, MinimalConfigWorks) {
  const Tokenizer tok = Tokenizer::from_json(minimal_sentencepiece_config().dump(), "sp.json");
  EXPECT_EQ(tok.encode("a A a"), (std::vector<uint32_t>{4, 2, 1, 4}));
  EXPECT_EQ(tok.decode(std::vector<uint32_t>{4, 2, 1, 4}), "a A a");
}

TEST(SentencePieceJson, ErrorsNameTheKey) {
  json cfg = minimal_sentencepiece_config();
  cfg["normalizer"]["normalizers"][0] = {{"type", "NFKC"}};
  expect_error(cfg,
               "normalizer.normalizers[0].type: expected \"Prepend\", \"Replace\" or "
               "\"Sequence\", got \"NFKC\"");

  cfg = minimal_sentencepiece_config();
  cfg["normalizer"]["normalizers"][1]["pattern"] = {{"Regex", " +"}};
  expect_error(cfg, "normalizer.normalizers[1].pattern: only {\"String\": ...} patterns");

  cfg = minimal_sentencepiece_config();
  cfg["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", "ab"}};
  expect_error(cfg, "pre_tokenizer.replacement: expected one character, got \"ab\"");

  cfg = minimal_sentencepiece_config();
  cfg["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", kMeta}, {"prepend_scheme", "x"}};
  expect_error(cfg, "pre_tokenizer.prepend_scheme: expected \"always\", \"first\" or \"never\"");

  cfg = minimal_sentencepiece_config();
  cfg["pre_tokenizer"] = {
      {"type", "Metaspace"}, {"replacement", kMeta}, {"add_prefix_space", false}};
  expect_error(cfg,
               "pre_tokenizer.add_prefix_space: false does not match the prepend scheme "
               "\"always (the default)\"");
  cfg["pre_tokenizer"]["prepend_scheme"] = "never";
  cfg["normalizer"] = nullptr;
  EXPECT_EQ(Tokenizer::from_json(cfg.dump(), "sp.json").encode("a a"),
            (std::vector<uint32_t>{3, 4}));

  cfg = minimal_sentencepiece_config();
  cfg["decoder"]["decoders"][1] = {{"type", "ByteLevel"}};
  expect_error(cfg, "decoder.decoders[1].type: expected \"Replace\", \"ByteFallback\"");

  cfg = minimal_sentencepiece_config();
  cfg["decoder"] = nullptr;
  expect_error(cfg, "decoder: missing");

  cfg = minimal_sentencepiece_config();
  cfg["decoder"]["decoders"][3]["start"] = -1;
  expect_error(cfg, "decoder.decoders[3].start: expected a count");
}

}  // namespace
}  // namespace zt::data
