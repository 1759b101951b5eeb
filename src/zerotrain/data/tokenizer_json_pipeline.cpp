// Reading the normalizer, pre-tokenizer and decoder of a SentencePiece-style tokenizer.json
// (Llama 2, Mistral): the stage types those files use, nested Sequences flattened; any other type
// is refused by its key, so that a file is never encoded differently from `tokenizers`.
#include <utility>

#include "zerotrain/data/tokenizer_json_reader.h"
#include "zerotrain/data/utf8.h"

namespace zt::data {
namespace {

using nlohmann::json;
using Reader = TokenizerJsonReader;

// Replace's pattern: {"String": "..."} (a Regex is refused).
std::string string_pattern(const Reader& r, const json& stage, const std::string& path) {
  const std::string p = Reader::join(path, "pattern");
  const json& pattern = r.object(r.member(stage, path, "pattern"), p);
  if (!pattern.contains("String"))
    r.fail(p,
           str("only {\"String\": ...} patterns are supported, got ", Reader::describe(pattern)));
  std::string s = r.string(pattern["String"], Reader::join(p, "String"));
  if (s.empty()) r.fail(Reader::join(p, "String"), "expected a non-empty string");
  return s;
}

std::string one_character(const Reader& r, const json& stage, const std::string& path,
                          const char* key) {
  std::string s = r.string(r.member(stage, path, key), Reader::join(path, key));
  if (s.empty() || decode_utf8(s, 0).len != s.size() || !decode_utf8(s, 0).valid)
    r.fail(Reader::join(path, key), str("expected one character, got ", Reader::quote(s)));
  return s;
}

// Metaspace's settings, as `tokenizers` reads them: "prepend_scheme" defaults to "always" and
// "split" to true; the legacy "add_prefix_space" must agree (false only with "never").
MetaspaceOptions read_metaspace(const Reader& r, const json& stage, const std::string& path) {
  MetaspaceOptions m;
  m.replacement = one_character(r, stage, path, "replacement");
  const json* scheme = r.optional_member(stage, "prepend_scheme");
  if (scheme) {
    const std::string p = Reader::join(path, "prepend_scheme");
    const std::string s = r.string(*scheme, p);
    if (s == "always")
      m.prepend_scheme = PrependScheme::Always;
    else if (s == "first")
      m.prepend_scheme = PrependScheme::First;
    else if (s == "never")
      m.prepend_scheme = PrependScheme::Never;
    else
      r.fail(p, str("expected \"always\", \"first\" or \"never\", got ", Reader::quote(s)));
  }
  if (!r.boolean(stage, path, "add_prefix_space", true) && m.prepend_scheme != PrependScheme::Never)
    r.fail(Reader::join(path, "add_prefix_space"),
           str("false does not match the prepend scheme \"",
               scheme ? scheme->get<std::string>() : "always (the default)",
               "\" (tokenizers refuses this too; false means \"never\")"));
  m.split = r.boolean(stage, path, "split", true);
  return m;
}

void add_normalizer_steps(const Reader& r, const json& stage, const std::string& path,
                          std::vector<NormalizerStep>& steps) {
  const std::string type = r.type(stage, path);
  if (type == "Sequence") {
    const std::string p = Reader::join(path, "normalizers");
    const json& list = r.array(r.member(stage, path, "normalizers"), p);
    for (size_t i = 0; i < list.size(); ++i)
      add_normalizer_steps(r, list[i], str(p, "[", i, "]"), steps);
  } else if (type == "Prepend") {
    NormalizerStep s;
    s.kind = NormalizerStep::Kind::Prepend;
    s.content = r.string(r.member(stage, path, "prepend"), Reader::join(path, "prepend"));
    steps.push_back(std::move(s));
  } else if (type == "Replace") {
    NormalizerStep s;
    s.kind = NormalizerStep::Kind::Replace;
    s.pattern = string_pattern(r, stage, path);
    s.content = r.string(r.member(stage, path, "content"), Reader::join(path, "content"));
    steps.push_back(std::move(s));
  } else {
    r.fail(Reader::join(path, "type"),
           str("expected \"Prepend\", \"Replace\" or \"Sequence\", got ", Reader::quote(type)));
  }
}

void add_decoder_steps(const Reader& r, const json& stage, const std::string& path,
                       std::vector<DecoderStep>& steps) {
  const std::string type = r.type(stage, path);
  DecoderStep s;
  if (type == "Sequence") {
    const std::string p = Reader::join(path, "decoders");
    const json& list = r.array(r.member(stage, path, "decoders"), p);
    for (size_t i = 0; i < list.size(); ++i)
      add_decoder_steps(r, list[i], str(p, "[", i, "]"), steps);
    return;
  } else if (type == "Replace") {
    s.kind = DecoderStep::Kind::Replace;
    s.pattern = string_pattern(r, stage, path);
    s.content = r.string(r.member(stage, path, "content"), Reader::join(path, "content"));
  } else if (type == "ByteFallback") {
    s.kind = DecoderStep::Kind::ByteFallback;
  } else if (type == "Fuse") {
    s.kind = DecoderStep::Kind::Fuse;
  } else if (type == "Strip") {
    s.kind = DecoderStep::Kind::Strip;
    s.content = one_character(r, stage, path, "content");
    s.start = r.count(stage, path, "start", 0);
    s.stop = r.count(stage, path, "stop", 0);
  } else if (type == "Metaspace") {
    const MetaspaceOptions m = read_metaspace(r, stage, path);
    s.kind = DecoderStep::Kind::Metaspace;
    s.pattern = m.replacement;
    s.prepends = m.prepend_scheme != PrependScheme::Never;
  } else {
    r.fail(Reader::join(path, "type"),
           str("expected \"Replace\", \"ByteFallback\", \"Fuse\", \"Strip\", \"Metaspace\" or "
               "\"Sequence\", got ",
               Reader::quote(type)));
  }
  steps.push_back(std::move(s));
}

}  // namespace

Normalizer read_normalizer(const Reader& r, const json& cfg) {
  std::vector<NormalizerStep> steps;
  if (const json* stage = r.optional_member(cfg, "normalizer"))
    add_normalizer_steps(r, *stage, "normalizer", steps);
  return Normalizer(std::move(steps));
}

PreTokenizerOptions read_sentencepiece_pre_tokenizer(const Reader& r, const json& cfg) {
  PreTokenizerOptions pre;
  pre.kind = PreTokenizerOptions::Kind::None;
  const json* stage = r.optional_member(cfg, "pre_tokenizer");
  if (!stage) return pre;
  const std::string type = r.type(*stage, "pre_tokenizer");
  if (type != "Metaspace")
    r.fail("pre_tokenizer.type",
           str("expected \"ByteLevel\" or \"Metaspace\" (or null), got ", Reader::quote(type)));
  pre.kind = PreTokenizerOptions::Kind::Metaspace;
  pre.metaspace = read_metaspace(r, *stage, "pre_tokenizer");
  return pre;
}

TokenDecoder read_sentencepiece_decoder(const Reader& r, const json& cfg) {
  const json* stage = r.optional_member(cfg, "decoder");
  if (!stage)
    r.fail("decoder",
           "missing: a SentencePiece-style tokenizer needs one (as Llama 2's: Sequence "
           "of Replace, ByteFallback, Fuse, Strip)");
  std::vector<DecoderStep> steps;
  add_decoder_steps(r, *stage, "decoder", steps);
  return TokenDecoder(std::move(steps));
}

}  // namespace zt::data
