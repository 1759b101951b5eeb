// Reading a tokenizer directory's chat template and special tokens (see chat_template_config.h).
#include "zerotrain/data/chat_template_config.h"

#include <nlohmann/json.hpp>

#include "zerotrain/core/files.h"
#include "zerotrain/core/json_util.h"

namespace zt::data {

TokenizerChatConfig read_tokenizer_chat_config(const std::filesystem::path& dir,
                                               const std::string& template_name) {
  TokenizerChatConfig out;
  const auto config_path = dir / "tokenizer_config.json";
  nlohmann::json config = nlohmann::json::object();
  if (std::filesystem::exists(config_path))
    config = parse_json(read_text_file(config_path, "data"), "data", config_path.string());
  if (!config.is_object())
    throw ValueError(
        "data", str(config_path.string(), ": expected a JSON object, got ", describe_json(config)));
  for (const char* key : {"bos_token", "eos_token", "unk_token", "pad_token"}) {
    auto it = config.find(key);
    if (it == config.end() || it->is_null()) continue;
    if (it->is_string()) {
      out.special_tokens.emplace_back(key, TemplateValue::of(it->get<std::string>()));
    } else if (it->is_object() && it->contains("content") && (*it)["content"].is_string()) {
      out.special_tokens.emplace_back(key, TemplateValue::of((*it)["content"].get<std::string>()));
    } else {
      throw ValueError("data", str(config_path.string(), ": ", key, " is ", describe_json(*it),
                                   ", expected a string or an object with a \"content\""));
    }
  }
  const auto jinja_path = dir / "chat_template.jinja";
  if (std::filesystem::exists(jinja_path)) {
    out.source = jinja_path.string();
    out.chat_template.emplace(out.source, read_text_file(jinja_path, "data"));
    return out;
  }
  auto it = config.find("chat_template");
  if (it == config.end() || it->is_null()) return out;
  out.source = config_path.string() + " chat_template";
  if (it->is_string()) {
    out.chat_template.emplace(out.source, it->get<std::string>());
    return out;
  }
  if (!it->is_array())
    throw ValueError("data",
                     str(out.source, ": expected a string or a list of named templates, got ",
                         describe_json(*it)));
  std::string names;
  for (const auto& entry : *it) {
    if (!entry.is_object() || !entry.contains("name") || !entry.contains("template") ||
        !entry["name"].is_string() || !entry["template"].is_string())
      throw ValueError("data", str(out.source,
                                   ": each entry needs a string \"name\" and "
                                   "\"template\", got ",
                                   describe_json(entry)));
    const std::string name = entry["name"];
    names += (names.empty() ? "" : ", ") + name;
    if (name == template_name) {
      out.source += str(" \"", name, "\"");
      out.chat_template.emplace(out.source, entry["template"].get<std::string>());
      return out;
    }
  }
  throw ValueError(
      "data", str(out.source, ": no template named \"", template_name, "\" (it has: ", names, ")"));
}

}  // namespace zt::data
