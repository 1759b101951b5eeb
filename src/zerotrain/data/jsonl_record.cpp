// One JSON Lines record -> its text (see jsonl_record.h).
#include "zerotrain/data/jsonl_record.h"

#include <nlohmann/json.hpp>

#include "zerotrain/core/error.h"
#include "zerotrain/core/json_util.h"

namespace zt::data {

using json = nlohmann::ordered_json;

std::string describe_jsonl_value(const json& v) {
  if (v.is_null()) return "null";
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  const std::string type = v.type_name();
  const bool vowel = type.find_first_of("aeiou") == 0;
  return str(vowel ? "an " : "a ", type, " ", s);
}

const std::string* jsonl_string_field(const json& record, const std::string& field,
                                      std::string& error) {
  auto it = record.find(field);
  if (it == record.end()) {
    error = str("no field \"", field, "\"");
    return nullptr;
  }
  if (!it->is_string()) {
    error = str("field \"", field, "\" is ", describe_jsonl_value(*it), ", expected a string");
    return nullptr;
  }
  return it->get_ptr<const std::string*>();
}

std::optional<json> parse_jsonl_object(std::string_view line, std::string& error) {
  json record;
  // Describing a deeper value would recurse as deep.
  const auto depth_limit = [](int depth, json::parse_event_t event, json&) {
    check_json_depth(depth, event);
    return true;
  };
  try {
    record = json::parse(line, depth_limit);
  } catch (const JsonTooDeep&) {
    error = json_too_deep_message();
    return std::nullopt;
  } catch (const json::parse_error& e) {
    // "[json.exception.parse_error.101] parse error at line 1, column 5: ...; near \"...\"": the
    // reason and an excerpt, never the whole record (a broken one may be megabytes long).
    std::string what = json_syntax_error(e, line);
    if (const size_t at = what.find("] "); at != std::string::npos) what = what.substr(at + 2);
    error = str("not valid JSON: ", what);
    return std::nullopt;
  }
  if (!record.is_object()) {
    error = str("expected a JSON object, got ", describe_jsonl_value(record));
    return std::nullopt;
  }
  return record;
}

RecordText jsonl_record_text(std::string_view line, const JsonlFields& fields) {
  RecordText out;
  const std::optional<json> parsed = parse_jsonl_object(line, out.error);
  if (!parsed) return out;
  const json& record = *parsed;
  if (!fields.text.empty()) {
    if (const std::string* text = jsonl_string_field(record, fields.text, out.error)) out.text = *text;
    return out;
  }
  const std::string* prompt = jsonl_string_field(record, fields.prompt, out.error);
  if (!prompt) return out;
  const std::string* completion = jsonl_string_field(record, fields.completion, out.error);
  if (!completion) return out;
  out.text = *prompt + *completion;
  return out;
}

}  // namespace zt::data
