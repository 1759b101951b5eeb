// Generation settings read from a model directory (see generation_config.h).
#include "zerotrain/io/generation_config.h"

#include <algorithm>

#include "zerotrain/core/files.h"
#include "zerotrain/core/io_error.h"
#include "zerotrain/core/json_util.h"

namespace zt::io {

namespace {

using nlohmann::json;

json read_json(const std::filesystem::path& path) {
  return parse_json(read_text_file(path, "generate"), "generate", path.string());
}

[[noreturn]] void bad(const std::filesystem::path& file, const std::string& key, const json& v,
                      const std::string& expected) {
  throw FormatError("generate", str(file.string(), ": ", key, ": expected ", expected, ", got ",
                                    describe_json(v)));
}

// An integer id, a list of them, or null (none).
std::vector<int64_t> token_ids(const std::filesystem::path& file, const json& v) {
  std::vector<int64_t> ids;
  if (v.is_null()) return ids;
  if (v.is_number_integer()) return {v.get<int64_t>()};
  if (!v.is_array()) bad(file, "eos_token_id", v, "an integer or a list of integers");
  for (const json& e : v) {
    if (!e.is_number_integer()) bad(file, "eos_token_id", v, "an integer or a list of integers");
    ids.push_back(e.get<int64_t>());
  }
  return ids;
}

}  // namespace

std::vector<int64_t> read_eos_token_ids(const std::filesystem::path& dir) {
  for (const char* name : {"generation_config.json", "config.json"}) {
    const std::filesystem::path file = dir / name;
    if (!std::filesystem::is_regular_file(file)) continue;
    const json j = read_json(file);
    if (!j.is_object()) bad(file, "the file", j, "a JSON object");
    if (j.contains("eos_token_id")) return token_ids(file, j["eos_token_id"]);
  }
  return {};
}

std::vector<int64_t> read_prompt_prefix_ids(const std::filesystem::path& tokenizer_json,
                                            int64_t bos_token_id) {
  std::vector<int64_t> prefix;
  const json t = read_json(tokenizer_json);
  const json* post = t.is_object() && t.contains("post_processor") ? &t["post_processor"] : nullptr;
  if (post && post->is_object() && post->value("type", "") == "TemplateProcessing") {
    const json& single = post->value("single", json::array());
    const json& specials = post->value("special_tokens", json::object());
    for (const json& piece : single) {
      if (!piece.is_object() || !piece.contains("SpecialToken")) break;  // the sequence starts
      const json& name = piece["SpecialToken"].value("id", json());
      if (!name.is_string() || !specials.contains(name.get<std::string>()))
        bad(tokenizer_json, "post_processor.single", piece, "a special token it defines");
      const json& ids = specials[name.get<std::string>()].value("ids", json());
      if (!ids.is_array()) bad(tokenizer_json, "post_processor.special_tokens", ids, "ids");
      for (const json& id : ids) {
        if (!id.is_number_integer())
          bad(tokenizer_json, "post_processor.special_tokens", ids, "integer ids");
        prefix.push_back(id.get<int64_t>());
      }
    }
  }
  const std::filesystem::path config = tokenizer_json.parent_path() / "tokenizer_config.json";
  if (!std::filesystem::is_regular_file(config)) return prefix;
  const json c = read_json(config);
  if (!c.is_object()) bad(config, "the file", c, "a JSON object");
  if (!c.contains("add_bos_token")) return prefix;
  if (!c["add_bos_token"].is_boolean())
    bad(config, "add_bos_token", c["add_bos_token"], "true or false");
  const bool has_bos =
      bos_token_id >= 0 && std::find(prefix.begin(), prefix.end(), bos_token_id) != prefix.end();
  if (c["add_bos_token"].get<bool>() && !has_bos && bos_token_id >= 0)
    prefix.insert(prefix.begin(), bos_token_id);
  if (!c["add_bos_token"].get<bool>() && has_bos)
    prefix.erase(std::find(prefix.begin(), prefix.end(), bos_token_id));
  return prefix;
}

bool read_clean_up_tokenization_spaces(const std::filesystem::path& tokenizer_json) {
  const std::filesystem::path config = tokenizer_json.parent_path() / "tokenizer_config.json";
  if (!std::filesystem::is_regular_file(config)) return false;
  const json c = read_json(config);
  if (!c.is_object() || !c.contains("clean_up_tokenization_spaces")) return false;
  const json& v = c["clean_up_tokenization_spaces"];
  if (!v.is_boolean()) bad(config, "clean_up_tokenization_spaces", v, "true or false");
  return v.get<bool>();
}

}  // namespace zt::io
