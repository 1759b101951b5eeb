// Reading tokenizer.json: every key is checked for presence and type, and every setting this
// tokenizer does not implement is refused by name, so that an unsupported file fails loudly instead
// of encoding differently from `tokenizers`.
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "zerotrain/data/byte_level.h"
#include "zerotrain/data/tokenizer.h"

namespace zt::data {
namespace {

using nlohmann::json;

// Typed access to one tokenizer.json, with errors that name the file and the key path.
class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& path, const std::string& message) const {
    throw TokenizerError(str(source_, ": ", path, ": ", message));
  }

  static std::string describe(const json& v) {
    std::string s = v.dump();
    if (s.size() > 60) s = s.substr(0, 57) + "...";
    return str(v.type_name(), " ", s);
  }

  const json& member(const json& obj, const std::string& path, const char* key) const {
    auto it = obj.find(key);
    if (it == obj.end()) fail(join(path, key), "missing");
    return *it;
  }
  const json* optional_member(const json& obj, const char* key) const {
    auto it = obj.find(key);
    return it == obj.end() || it->is_null() ? nullptr : &*it;
  }

  const json& object(const json& v, const std::string& path) const {
    if (!v.is_object()) fail(path, str("expected an object, got ", describe(v)));
    return v;
  }
  std::string string(const json& v, const std::string& path) const {
    if (!v.is_string()) fail(path, str("expected a string, got ", describe(v)));
    return v.get<std::string>();
  }
  bool boolean(const json& obj, const std::string& path, const char* key, bool fallback) const {
    const json* v = optional_member(obj, key);
    if (!v) return fallback;
    if (!v->is_boolean()) fail(join(path, key), str("expected true or false, got ", describe(*v)));
    return v->get<bool>();
  }
  uint32_t id(const json& v, const std::string& path) const {
    if (!v.is_number_unsigned() || v.get<uint64_t>() > UINT32_MAX)
      fail(path, str("expected a token id (0 to 2^32-1), got ", describe(v)));
    return static_cast<uint32_t>(v.get<uint64_t>());
  }

  static std::string join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }

 private:
  std::string source_;
};

BpeOptions read_bpe_options(const Reader& r, const json& model) {
  if (const json* d = r.optional_member(model, "dropout"); d && !(d->is_number() && *d == 0))
    r.fail("model.dropout",
           str("BPE dropout is not supported (expected null), got ", Reader::describe(*d)));
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    const json* v = r.optional_member(model, key);
    if (v && !(v->is_string() && v->get<std::string>().empty()))
      r.fail(Reader::join("model", key),
             str("not supported by byte-level BPE (expected null), got ", Reader::describe(*v)));
  }
  if (r.boolean(model, "model", "byte_fallback", false))
    r.fail("model.byte_fallback", "byte fallback is not supported (expected false)");
  BpeOptions opt;
  if (const json* unk = r.optional_member(model, "unk_token"))
    opt.unk_token = r.string(*unk, "model.unk_token");
  opt.fuse_unk = r.boolean(model, "model", "fuse_unk", false);
  opt.ignore_merges = r.boolean(model, "model", "ignore_merges", false);
  return opt;
}

std::vector<std::pair<std::string, std::string>> read_merges(const Reader& r, const json& model) {
  const json& merges = r.member(model, "model", "merges");
  if (!merges.is_array())
    r.fail("model.merges", str("expected an array, got ", Reader::describe(merges)));
  std::vector<std::pair<std::string, std::string>> out;
  out.reserve(merges.size());
  for (size_t i = 0; i < merges.size(); ++i) {
    const json& m = merges[i];
    const std::string path = str("model.merges[", i, "]");
    if (m.is_string()) {
      const std::string s = m.get<std::string>();
      const size_t sp = s.find(' ');
      if (sp == std::string::npos || s.find(' ', sp + 1) != std::string::npos)
        r.fail(path, str("expected \"left right\" (one space), got \"", s, "\""));
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
  for (const auto& [token, id] : vocab.items())
    out.emplace(token, r.id(id, str("model.vocab[\"", token, "\"]")));
  return out;
}

std::vector<AddedToken> read_added_tokens(const Reader& r, const json& cfg) {
  std::vector<AddedToken> out;
  const json* list = r.optional_member(cfg, "added_tokens");
  if (!list) return out;
  if (!list->is_array())
    r.fail("added_tokens", str("expected an array, got ", Reader::describe(*list)));
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string path = str("added_tokens[", i, "]");
    const json& t = r.object((*list)[i], path);
    AddedToken a;
    a.id = r.id(r.member(t, path, "id"), path + ".id");
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
        r.fail(str("model.merges[", i, "]"), str("\"", token, "\" (from the merge \"", left, " ",
                                                 right, "\") is not in model.vocab"));
  }
  if (options.unk_token && !vocab.contains(*options.unk_token))
    r.fail("model.unk_token", str("\"", *options.unk_token, "\" is not in model.vocab"));
}

// The one supported component type of a pipeline stage ("ByteLevel"), or an error naming the key.
const json& require_byte_level(const Reader& r, const json& cfg, const char* key) {
  const json* stage = r.optional_member(cfg, key);
  if (!stage) r.fail(key, "missing: a byte-level BPE tokenizer needs a ByteLevel one");
  r.object(*stage, key);
  const std::string type = r.string(r.member(*stage, key, "type"), Reader::join(key, "type"));
  if (type != "ByteLevel")
    r.fail(Reader::join(key, "type"), str("expected \"ByteLevel\", got \"", type, "\""));
  return *stage;
}

std::string read_file_text(const std::filesystem::path& path) {
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
  json cfg;
  try {
    cfg = json::parse(json_text);
  } catch (const json::parse_error& e) {
    throw TokenizerError(str(source, ": not valid JSON: ", e.what()));
  }
  r.object(cfg, "(top level)");

  const json& model = r.object(r.member(cfg, "", "model"), "model");
  if (const json* type = r.optional_member(model, "type")) {
    const std::string t = r.string(*type, "model.type");
    if (t != "BPE") r.fail("model.type", str("expected \"BPE\", got \"", t, "\""));
  }
  if (const json* norm = r.optional_member(cfg, "normalizer")) {
    const json* type = norm->is_object() ? r.optional_member(*norm, "type") : nullptr;
    r.fail(type ? "normalizer.type" : "normalizer",
           str("normalizers are not supported (expected null), got ",
               Reader::describe(type ? *type : *norm)));
  }
  const json& pre = require_byte_level(r, cfg, "pre_tokenizer");
  require_byte_level(r, cfg, "decoder");

  Tokenizer tok;
  tok.source_ = source;
  tok.pre_.add_prefix_space = r.boolean(pre, "pre_tokenizer", "add_prefix_space", true);
  tok.pre_.use_regex = r.boolean(pre, "pre_tokenizer", "use_regex", true);

  auto vocab = read_vocab(r, model);
  auto merges = read_merges(r, model);
  BpeOptions options = read_bpe_options(r, model);
  check_model_tokens(r, vocab, merges, options);
  tok.model_ = std::make_shared<const BpeModel>(vocab, merges, options);

  std::vector<AddedToken> added = read_added_tokens(r, cfg);
  uint64_t size = 0;
  for (const auto& [token, id] : vocab)
    size = std::max<uint64_t>(size, uint64_t{id} + 1);
  for (const AddedToken& t : added)
    size = std::max<uint64_t>(size, uint64_t{t.id} + 1);
  tok.vocab_size_ = size;

  // Decoding spells each token through the byte-level alphabet; a token with a character outside
  // it decodes to its own UTF-8 bytes (as `tokenizers`' ByteLevel decoder does).
  tok.id_to_bytes_.assign(size, {});
  tok.id_known_.assign(size, 0);
  auto set_bytes = [&](uint32_t id, const std::string& spelling) {
    auto raw = from_byte_level(spelling);
    tok.id_to_bytes_[id] = raw ? std::move(*raw) : spelling;
    tok.id_known_[id] = 1;
  };
  for (const auto& [token, id] : vocab)
    set_bytes(id, token);
  for (const AddedToken& t : added)
    set_bytes(t.id, t.content);
  tok.added_ = AddedVocabulary(std::move(added));
  return tok;
}

}  // namespace zt::data
