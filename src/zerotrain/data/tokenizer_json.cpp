// Reading tokenizer.json: every key is checked for presence and type, and every setting this
// tokenizer does not implement is refused by name, so that an unsupported file fails loudly instead
// of encoding differently from `tokenizers`. The family is chosen once from the pre-tokenizer:
// ByteLevel gives byte-level BPE, Metaspace or none a SentencePiece-style BPE. Ids are checked
// before anything is sized by them: no id repeated in model.vocab or among the added tokens, none
// far above the number of tokens.
#include <fstream>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "zerotrain/core/files.h"
#include "zerotrain/data/byte_level.h"
#include "zerotrain/data/tokenizer.h"
#include "zerotrain/data/tokenizer_json_reader.h"

namespace zt::data {
namespace {

using nlohmann::json;
using Reader = TokenizerJsonReader;

// Ids may leave gaps (some files skip ids between the vocabulary and the added tokens), but an id
// this far above the number of tokens is a broken file, refused before tables are sized by it.
constexpr uint64_t kMaxIdGap = uint64_t{1} << 20;

BpeOptions read_bpe_options(const Reader& r, const json& model, BpeAlphabet alphabet) {
  if (const json* d = r.optional_member(model, "dropout"); d && !(d->is_number() && *d == 0))
    r.fail("model.dropout",
           str("BPE dropout is not supported (expected null), got ", Reader::describe(*d)));
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    const json* v = r.optional_member(model, key);
    if (v && !(v->is_string() && v->get<std::string>().empty()))
      r.fail(Reader::join("model", key),
             str("not supported (expected null), got ", Reader::describe(*v)));
  }
  BpeOptions opt;
  opt.alphabet = alphabet;
  opt.byte_fallback = r.boolean(model, "model", "byte_fallback", false);
  if (opt.byte_fallback && alphabet == BpeAlphabet::ByteLevel)
    r.fail("model.byte_fallback",
           "byte fallback is not supported by byte-level BPE (expected false)");
  if (const json* unk = r.optional_member(model, "unk_token"))
    opt.unk_token = r.string(*unk, "model.unk_token");
  opt.fuse_unk = r.boolean(model, "model", "fuse_unk", false);
  opt.ignore_merges = r.boolean(model, "model", "ignore_merges", false);
  return opt;
}

std::vector<std::pair<std::string, std::string>> read_merges(const Reader& r, const json& model) {
  const json& merges = r.array(r.member(model, "model", "merges"), "model.merges");
  std::vector<std::pair<std::string, std::string>> out;
  out.reserve(merges.size());
  for (size_t i = 0; i < merges.size(); ++i) {
    const json& m = merges[i];
    const std::string path = str("model.merges[", i, "]");
    if (m.is_string()) {
      const std::string s = m.get<std::string>();
      const size_t sp = s.find(' ');
      if (sp == std::string::npos || s.find(' ', sp + 1) != std::string::npos)
        r.fail(path, str("expected \"left right\" (one space), got ", Reader::quote(s)));
      out.emplace_back(s.substr(0, sp), s.substr(sp + 1));
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      out.emplace_back(m[0].get<std::string>(), m[1].get<std::string>());
    } else {
      r.fail(path, str("expected \"left right\" or [left, right], got ", Reader::describe(m)));
    }
  }
  return out;
}

std::unordered_map<std::string, uint32_t> read_vocab(const Reader& r, const json& model) {
  const json& vocab = r.object(r.member(model, "model", "vocab"), "model.vocab");
  std::unordered_map<std::string, uint32_t> out;
  out.reserve(vocab.size());
  std::unordered_map<uint32_t, std::string> token_of_id;
  token_of_id.reserve(vocab.size());
  for (const auto& [token, id_value] : vocab.items()) {
    const std::string path = str("model.vocab[", Reader::quote(token), "]");
    const uint32_t id = r.id(id_value, path);
    if (uint64_t{id} >= vocab.size() + kMaxIdGap)
      r.fail(path, str("id ", id, " is far above the vocabulary's ", vocab.size(),
                       " entries (ids are expected below ", vocab.size() + kMaxIdGap, ")"));
    if (auto [it, fresh] = token_of_id.emplace(id, token); !fresh)
      r.fail(path, str("id ", id, " is also the id of ", Reader::quote(it->second)));
    out.emplace(token, id);
  }
  return out;
}

std::vector<AddedToken> read_added_tokens(const Reader& r, const json& cfg,
                                          uint64_t vocab_entries) {
  std::vector<AddedToken> out;
  const json* list = r.optional_member(cfg, "added_tokens");
  if (!list) return out;
  r.array(*list, "added_tokens");
  const uint64_t limit = vocab_entries + list->size() + kMaxIdGap;
  std::unordered_map<uint32_t, size_t> index_of_id;
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string path = str("added_tokens[", i, "]");
    const json& t = r.object((*list)[i], path);
    AddedToken a;
    a.id = r.id(r.member(t, path, "id"), path + ".id");
    if (uint64_t{a.id} >= limit)
      r.fail(path + ".id", str("id ", a.id, " is far above the ", vocab_entries + list->size(),
                               " tokens (ids are expected below ", limit, ")"));
    if (auto [it, fresh] = index_of_id.emplace(a.id, i); !fresh)
      r.fail(path + ".id", str("id ", a.id, " is also the id of added_tokens[", it->second, "]"));
    a.content = r.string(r.member(t, path, "content"), path + ".content");
    a.single_word = r.boolean(t, path, "single_word", false);
    a.lstrip = r.boolean(t, path, "lstrip", false);
    a.rstrip = r.boolean(t, path, "rstrip", false);
    a.normalized = r.boolean(t, path, "normalized", true);
    a.special = r.boolean(t, path, "special", false);
    out.push_back(std::move(a));
  }
  return out;
}

// Every merge's parts and result, and the unk token, must be vocabulary entries.
void check_model_tokens(const Reader& r, const std::unordered_map<std::string, uint32_t>& vocab,
                        const std::vector<std::pair<std::string, std::string>>& merges,
                        const BpeOptions& options) {
  for (size_t i = 0; i < merges.size(); ++i) {
    const auto& [left, right] = merges[i];
    for (const std::string& token : {left, right, left + right})
      if (!vocab.contains(token))
        r.fail(str("model.merges[", i, "]"),
               str(Reader::quote(token), " (from the merge ", Reader::quote(left + " " + right),
                   ") is not in model.vocab"));
  }
  if (options.unk_token && !vocab.contains(*options.unk_token))
    r.fail("model.unk_token", str(Reader::quote(*options.unk_token), " is not in model.vocab"));
}

// The one stage type byte-level BPE supports ("ByteLevel"), or an error naming the key.
const json& require_byte_level(const Reader& r, const json& cfg, const char* key) {
  const json* stage = r.optional_member(cfg, key);
  if (!stage) r.fail(key, "missing: a byte-level BPE tokenizer needs a ByteLevel one");
  const std::string type = r.type(*stage, key);
  if (type != "ByteLevel")
    r.fail(Reader::join(key, "type"), str("expected \"ByteLevel\", got ", Reader::quote(type)));
  return *stage;
}

bool is_byte_level(const Reader& r, const json& cfg) {
  const json* pre = r.optional_member(cfg, "pre_tokenizer");
  return pre && r.type(*pre, "pre_tokenizer") == "ByteLevel";
}

std::string read_file_text(const std::filesystem::path& path) {
  if (const std::string kind = non_regular_kind(path); !kind.empty())
    throw TokenizerError(str(path.string(), ": the tokenizer file is ", kind, ", not a regular file"));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TokenizerError(str(path.string(), ": cannot open the tokenizer file"));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

Tokenizer Tokenizer::from_file(const std::filesystem::path& path) {
  return from_json(read_file_text(path), path.string());
}

Tokenizer Tokenizer::from_json(std::string_view json_text, const std::string& source) {
  const Reader r(source);
  const json cfg = r.parse(json_text);
  r.object(cfg, "(top level)");

  const json& model = r.object(r.member(cfg, "", "model"), "model");
  if (const json* type = r.optional_member(model, "type")) {
    const std::string t = r.string(*type, "model.type");
    if (t != "BPE") r.fail("model.type", str("expected \"BPE\", got ", Reader::quote(t)));
  }

  Tokenizer tok;
  tok.source_ = source;
  const bool byte_level = is_byte_level(r, cfg);
  if (byte_level) {
    if (const json* norm = r.optional_member(cfg, "normalizer")) {
      const json* type = norm->is_object() ? r.optional_member(*norm, "type") : nullptr;
      r.fail(type ? "normalizer.type" : "normalizer",
             str("normalizers are not supported with a ByteLevel pre-tokenizer (expected null), "
                 "got ",
                 Reader::describe(type ? *type : *norm)));
    }
    const json& pre = require_byte_level(r, cfg, "pre_tokenizer");
    require_byte_level(r, cfg, "decoder");
    tok.pre_.add_prefix_space = r.boolean(pre, "pre_tokenizer", "add_prefix_space", true);
    tok.pre_.use_regex = r.boolean(pre, "pre_tokenizer", "use_regex", true);
  } else {
    tok.normalizer_ = read_normalizer(r, cfg);
    tok.pre_ = read_sentencepiece_pre_tokenizer(r, cfg);
    tok.decoder_ = read_sentencepiece_decoder(r, cfg);
  }

  auto vocab = read_vocab(r, model);
  auto merges = read_merges(r, model);
  BpeOptions options =
      read_bpe_options(r, model, byte_level ? BpeAlphabet::ByteLevel : BpeAlphabet::Text);
  check_model_tokens(r, vocab, merges, options);
  tok.model_ = std::make_shared<const BpeModel>(vocab, merges, options);

  std::vector<AddedToken> added = read_added_tokens(r, cfg, vocab.size());
  uint64_t size = 0;
  for (const auto& [token, id] : vocab)
    size = std::max<uint64_t>(size, uint64_t{id} + 1);
  for (const AddedToken& t : added)
    size = std::max<uint64_t>(size, uint64_t{t.id} + 1);
  tok.vocab_size_ = size;
  std::vector<uint32_t> empty_added;  // never matched, but their ids decode (to nothing)
  for (const AddedToken& t : added)
    if (t.content.empty()) empty_added.push_back(t.id);
  tok.added_ = AddedVocabulary(std::move(added), &tok.normalizer_);

  // Byte-level: each token's bytes through the byte-level alphabet; a token with a character
  // outside it decodes to its own UTF-8 bytes (as `tokenizers`' ByteLevel decoder does).
  // SentencePiece-style: each token's spelling, a normalized added token's normalized content.
  tok.id_to_text_.assign(size, {});
  tok.id_known_.assign(size, 0);
  auto set_text = [&](uint32_t id, const std::string& spelling) {
    std::optional<std::string> raw;
    if (byte_level) raw = from_byte_level(spelling);
    tok.id_to_text_[id] = raw ? std::move(*raw) : spelling;
    tok.id_known_[id] = 1;
  };
  for (const auto& [token, id] : vocab)
    set_text(id, token);
  for (uint32_t id : empty_added)
    set_text(id, "");
  for (const AddedToken& t : tok.added_.tokens())
    set_text(t.id, tok.added_.pattern(t));

  // What skip_special_tokens leaves out: byte-level, the special added tokens; SentencePiece-style,
  // as `tokenizers` decides it by spelling, the ids spelled as a special token's content (so a
  // special token with normalized=true, spelled by its normalized content, stays).
  tok.id_special_.assign(size, 0);
  if (byte_level) {
    for (const AddedToken& t : tok.added_.tokens())
      tok.id_special_[t.id] = t.special;
  } else {
    std::unordered_set<std::string> special_contents;
    for (const AddedToken& t : tok.added_.tokens())
      if (t.special) special_contents.insert(t.content);
    for (size_t id = 0; id < size; ++id)
      tok.id_special_[id] = tok.id_known_[id] && special_contents.contains(tok.id_to_text_[id]);
  }
  return tok;
}

}  // namespace zt::data
