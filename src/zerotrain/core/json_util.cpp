// parse_json (repeated keys, depth limit), describe_json and quote_excerpt (see json_util.h).
#include "zerotrain/core/json_util.h"

#include <algorithm>
#include <set>
#include <vector>

#include "zerotrain/core/io_error.h"

namespace zt {

namespace {

constexpr size_t kExcerptChars = 40;

// A bounded preview of `v` appended to `out`: stops once `out` passes the excerpt length and
// describes containers below `depth_left` as "[...]" / "{...}", so the work is bounded too.
void append_preview(const nlohmann::json& v, int depth_left, std::string& out) {
  if (out.size() > kExcerptChars) return;
  if (v.is_string()) {
    out += quote_excerpt(v.get_ref<const std::string&>(), kExcerptChars);
    return;
  }
  if (!v.is_structured()) {
    out += v.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
    return;
  }
  const bool object = v.is_object();
  out += object ? '{' : '[';
  if (depth_left == 0) {
    out += v.empty() ? "" : "...";
  } else {
    bool first = true;
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (out.size() > kExcerptChars) {
        out += ", ...";
        break;
      }
      if (!first) out += ", ";
      first = false;
      if (object) out += quote_excerpt(it.key(), kExcerptChars) + ": ";
      append_preview(*it, depth_left - 1, out);
    }
  }
  out += object ? '}' : ']';
}

}  // namespace

std::string json_syntax_error(const nlohmann::json::exception& e, std::string_view text) {
  std::string why = e.what();
  if (const size_t echo = why.find("; last read"); echo != std::string::npos) why.resize(echo);
  if (why.size() > 160) why = why.substr(0, 157) + "...";
  for (char& ch : why)
    if (static_cast<unsigned char>(ch) < 0x20 || static_cast<unsigned char>(ch) > 0x7e) ch = '?';
  if (const auto* parse = dynamic_cast<const nlohmann::json::parse_error*>(&e)) {
    const size_t end = std::min<size_t>(parse->byte, text.size());
    const size_t begin = end > 24 ? end - 24 : 0;
    why += str("; near ", quote_excerpt(text.substr(begin, end - begin), 24));
  }
  return why;
}

std::string json_too_deep_message() {
  return str("not valid JSON: nested deeper than ", kMaxJsonDepth, " levels");
}

nlohmann::json parse_json(std::string_view text, std::string_view component,
                          const std::string& source) {
  // One set of keys per open object, to refuse repeated keys (nlohmann would keep the last).
  std::vector<std::set<std::string>> keys;
  std::string duplicate;
  auto callback = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    check_json_depth(depth, event);
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
  } catch (const JsonTooDeep&) {
    throw FormatError(component, str(source, ": ", json_too_deep_message()));
  } catch (const nlohmann::json::exception& e) {
    throw FormatError(component, str(source, ": not valid JSON: ", json_syntax_error(e, text)));
  }
  if (!duplicate.empty())
    throw FormatError(component,
                      str(source, ": key ", quote_excerpt(duplicate), " appears more than once"));
  return j;
}

std::string describe_json(const nlohmann::json& v) {
  std::string text;
  append_preview(v, 2, text);
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

std::string quote_excerpt(std::string_view text, size_t max_chars) {
  const bool cut = text.size() > max_chars;
  // ensure_ascii escapes control and non-ASCII characters; a UTF-8 sequence split by the cut or
  // invalid in the file becomes U+FFFD.
  const nlohmann::json s = std::string(cut ? text.substr(0, max_chars) : text);
  std::string out = s.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
  if (cut) out += "...";
  return out;
}

}  // namespace zt
