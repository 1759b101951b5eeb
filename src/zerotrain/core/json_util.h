// Small helpers for reading JSON files (safetensors headers, shard indexes, config.json, ds_config)
// with nlohmann::json: parsing that names the file and refuses what no such file holds (repeated
// keys, nesting past kMaxJsonDepth), and short, escaped descriptions of bad values for error
// messages (never the whole value: a hostile file can hold megabytes, 70,000 nested arrays or raw
// control bytes). Included by .cpp files only (the public headers of io/ do not expose nlohmann).
// Tested by tests/core/test_json_util.cpp.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace zt {

// Deeper than any config, header, index or tokenizer file holds (they nest 2 to 6 levels).
inline constexpr int kMaxJsonDepth = 64;

// Thrown by check_json_depth out of a parse callback: nlohmann recurses once per level of
// structure, so a hostile file nested 70,000 levels deep would overflow the stack.
struct JsonTooDeep {};

// For every parse callback (parse_json, the tokenizer's reader, a JSON Lines record): throws
// JsonTooDeep at an object or array opening at `depth` >= kMaxJsonDepth.
inline void check_json_depth(int depth, nlohmann::json::parse_event_t event) {
  using Event = nlohmann::json::parse_event_t;
  if ((event == Event::object_start || event == Event::array_start) && depth >= kMaxJsonDepth)
    throw JsonTooDeep{};
}

// What a reader says on JsonTooDeep: "not valid JSON: nested deeper than 64 levels".
std::string json_too_deep_message();

// Parses `text`; a syntax error, a repeated key in any object or nesting deeper than kMaxJsonDepth
// is a FormatError naming `source`.
nlohmann::json parse_json(std::string_view text, std::string_view component,
                          const std::string& source);

// nlohmann's parse or type error `e` for `text` as one printable line: its "last read" echo of the
// input (raw bytes, any length) replaced by a short escaped excerpt before the failing byte.
std::string json_syntax_error(const nlohmann::json::exception& e, std::string_view text);

// "a string \"4096\"", "an integer 7", "null", "an array [1, 2, ...]" ...: at most ~40 characters
// of the value, escaped to printable ASCII; containers are described only a few levels deep.
std::string describe_json(const nlohmann::json& v);

// `text` as a quoted JSON string, escaped to printable ASCII and cut to `max_chars` source bytes
// with "..." after the quote: for names and values read from files ("\"fp8\"", "\"\\u0000ab\"...").
std::string quote_excerpt(std::string_view text, size_t max_chars = 40);

}  // namespace zt
