// parse_json (with repeated-key detection) and describe_json (see json_util.h).
#include "zerotrain/core/json_util.h"

#include <set>
#include <vector>

#include "zerotrain/core/io_error.h"

namespace zt {

nlohmann::json parse_json(std::string_view text, std::string_view component,
                          const std::string& source) {
  // One set of keys per open object, to refuse repeated keys (nlohmann would keep the last).
  std::vector<std::set<std::string>> keys;
  std::string duplicate;
  auto callback = [&](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    if (event == Event::object_start) keys.emplace_back();
    if (event == Event::object_end && !keys.empty()) keys.pop_back();
    if (event == Event::key && !keys.empty() && duplicate.empty() &&
        !keys.back().insert(parsed.get<std::string>()).second)
      duplicate = parsed.get<std::string>();
    return true;
  };
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text.begin(), text.end(), callback);
  } catch (const nlohmann::json::exception& e) {
    throw FormatError(component, str(source, ": not valid JSON: ", e.what()));
  }
  if (!duplicate.empty())
    throw FormatError(component, str(source, ": key \"", duplicate, "\" appears more than once"));
  return j;
}

std::string describe_json(const nlohmann::json& v) {
  std::string text = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  switch (v.type()) {
    case nlohmann::json::value_t::null:
      return "null";
    case nlohmann::json::value_t::boolean:
      return "a boolean " + text;
    case nlohmann::json::value_t::string:
      return "a string " + text;
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
      return "an integer " + text;
    case nlohmann::json::value_t::number_float:
      return "a number " + text;
    case nlohmann::json::value_t::array:
      return "an array " + text;
    case nlohmann::json::value_t::object:
      return "an object " + text;
    default:
      return text;
  }
}

}  // namespace zt
