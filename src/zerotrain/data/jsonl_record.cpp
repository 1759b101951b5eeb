// One JSON Lines record -> its text (see jsonl_record.h).
#include "zerotrain/data/jsonl_record.h"

#include <nlohmann/json.hpp>

#include "zerotrain/core/error.h"
#include "zerotrain/core/json_util.h"

namespace zt::data {
namespace {

using nlohmann::json;

// "a number 7", "an array [1,2]", ... cut to a short excerpt.
std::string describe(const json& v) {
  if (v.is_null()) return "null";
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  const std::string type = v.type_name();
  const bool vowel = type.find_first_of("aeiou") == 0;
  return str(vowel ? "an " : "a ", type, " ", s);
}

// The string of `field`, or the reason it has none.
const std::string* string_field(const json& record, const std::string& field, std::string& error) {
  auto it = record.find(field);
  if (it == record.end()) {
    error = str("no field \"", field, "\"");
    return nullptr;
  }
  if (!it->is_string()) {
    error = str("field \"", field, "\" is ", describe(*it), ", expected a string");
    return nullptr;
  }
  return it->get_ptr<const std::string*>();
}

}  // namespace

RecordText jsonl_record_text(std::string_view line, const JsonlFields& fields) {
  RecordText out;
  json record;
  struct TooDeep {};  // describing a deeper value would recurse as deep
  const auto depth_limit = [](int depth, json::parse_event_t event, json&) {
    if ((event == json::parse_event_t::object_start || event == json::parse_event_t::array_start) &&
        depth >= kMaxJsonDepth)
      throw TooDeep{};
    return true;
  };
  try {
    record = json::parse(line, depth_limit);
  } catch (const TooDeep&) {
    out.error = str("not valid JSON: nested deeper than ", kMaxJsonDepth, " levels");
    return out;
  } catch (const json::parse_error& e) {
    // e.what() is "[json.exception.parse_error.101] parse error at line 1, column 5: ...".
    std::string what = e.what();
    if (const size_t at = what.find("] "); at != std::string::npos) what = what.substr(at + 2);
    out.error = str("not valid JSON: ", what);
    return out;
  }
  if (!record.is_object()) {
    out.error = str("expected a JSON object, got ", describe(record));
    return out;
  }
  if (!fields.text.empty()) {
    if (const std::string* text = string_field(record, fields.text, out.error)) out.text = *text;
    return out;
  }
  const std::string* prompt = string_field(record, fields.prompt, out.error);
  if (!prompt) return out;
  const std::string* completion = string_field(record, fields.completion, out.error);
  if (!completion) return out;
  out.text = *prompt + *completion;
  return out;
}

}  // namespace zt::data
