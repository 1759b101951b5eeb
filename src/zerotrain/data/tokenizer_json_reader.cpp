// TokenizerJsonReader: parsing with repeated-key detection and typed getters (see
// tokenizer_json_reader.h).
#include "zerotrain/data/tokenizer_json_reader.h"

#include <algorithm>
#include <unordered_set>
#include <vector>

#include "zerotrain/core/json_util.h"

namespace zt::data {

using nlohmann::json;

json TokenizerJsonReader::parse(std::string_view text) const {
  // One frame per open object or array: its key path, and the keys an object has seen (nlohmann
  // would silently keep the last of a repeated key, so that a vocabulary could lose an entry).
  struct Frame {
    std::string path;
    bool is_object;
    std::unordered_set<std::string> keys;
  };
  std::vector<Frame> frames;
  std::string last_key, duplicate_path, duplicate_key;
  auto callback = [&](int depth, json::parse_event_t event, json& parsed) {
    using Event = json::parse_event_t;
    check_json_depth(depth, event);
    if (event == Event::object_start || event == Event::array_start) {
      std::string path;
      if (!frames.empty())
        path = frames.back().is_object ? join(frames.back().path, last_key)
                                       : frames.back().path + "[]";
      frames.push_back({std::move(path), event == Event::object_start, {}});
    } else if ((event == Event::object_end || event == Event::array_end) && !frames.empty()) {
      frames.pop_back();
    } else if (event == Event::key && !frames.empty()) {
      last_key = parsed.get<std::string>();
      if (duplicate_key.empty() && !frames.back().keys.insert(last_key).second) {
        duplicate_path = frames.back().path;
        duplicate_key = last_key;
      }
    }
    return true;
  };
  json j;
  try {
    j = json::parse(text.begin(), text.end(), callback);
  } catch (const JsonTooDeep&) {
    throw TokenizerError(str(source_, ": ", json_too_deep_message()));
  } catch (const json::exception& e) {
    throw TokenizerError(str(source_, ": not valid JSON: ", json_syntax_error(e, text)));
  }
  if (!duplicate_key.empty())
    fail(duplicate_path.empty() ? "(top level)" : duplicate_path,
         str("the key ", quote_excerpt(duplicate_key), " appears more than once"));
  return j;
}

void TokenizerJsonReader::fail(const std::string& path, const std::string& message) const {
  // A path built from the file's keys is shown escaped when it is not short printable ASCII.
  const bool plain = path.size() <= 120 && std::all_of(path.begin(), path.end(), [](char ch) {
                       return ch >= 0x20 && ch < 0x7f;
                     });
  throw TokenizerError(str(source_, ": ", plain ? path : quote_excerpt(path, 80), ": ", message));
}

std::string TokenizerJsonReader::quote(std::string_view text) {
  return quote_excerpt(text);
}

std::string TokenizerJsonReader::describe(const json& v) {
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return str(v.type_name(), " ", s);
}

const json& TokenizerJsonReader::member(const json& obj, const std::string& path,
                                        const char* key) const {
  auto it = obj.find(key);
  if (it == obj.end()) fail(join(path, key), "missing");
  return *it;
}

const json* TokenizerJsonReader::optional_member(const json& obj, const char* key) const {
  auto it = obj.find(key);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

const json& TokenizerJsonReader::object(const json& v, const std::string& path) const {
  if (!v.is_object()) fail(path, str("expected an object, got ", describe(v)));
  return v;
}

const json& TokenizerJsonReader::array(const json& v, const std::string& path) const {
  if (!v.is_array()) fail(path, str("expected an array, got ", describe(v)));
  return v;
}

std::string TokenizerJsonReader::string(const json& v, const std::string& path) const {
  if (!v.is_string()) fail(path, str("expected a string, got ", describe(v)));
  return v.get<std::string>();
}

bool TokenizerJsonReader::boolean(const json& obj, const std::string& path, const char* key,
                                  bool fallback) const {
  const json* v = optional_member(obj, key);
  if (!v) return fallback;
  if (!v->is_boolean()) fail(join(path, key), str("expected true or false, got ", describe(*v)));
  return v->get<bool>();
}

uint32_t TokenizerJsonReader::id(const json& v, const std::string& path) const {
  if (!v.is_number_unsigned() || v.get<uint64_t>() > UINT32_MAX)
    fail(path, str("expected a token id (0 to 2^32-1), got ", describe(v)));
  return static_cast<uint32_t>(v.get<uint64_t>());
}

uint64_t TokenizerJsonReader::count(const json& obj, const std::string& path, const char* key,
                                    uint64_t fallback) const {
  const json* v = optional_member(obj, key);
  if (!v) return fallback;
  if (!v->is_number_unsigned())
    fail(join(path, key), str("expected a count (0 or more), got ", describe(*v)));
  return v->get<uint64_t>();
}

std::string TokenizerJsonReader::type(const json& stage, const std::string& path) const {
  object(stage, path);
  return string(member(stage, path, "type"), join(path, "type"));
}

}  // namespace zt::data
