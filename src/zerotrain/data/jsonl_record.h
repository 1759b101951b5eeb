// The text of one JSON Lines record for `zerotrain data prepare`: the string of a named field (a
// dataset with a "text" column, as the Hugging Face Trainer examples use), or a prompt and a
// completion field joined into one text as TRL's SFTTrainer tokenizes prompt-completion data
// (prompt + completion, one string). A record that is not a JSON object or lacks a string field
// gives an error message instead, for `data prepare` to skip and report with its line number.
// Chat records (a list of messages) are chat_record.h's; both parse a line with
// parse_jsonl_object.
// Tested in tests/data/test_jsonl_record.cpp.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace zt::data {

struct JsonlFields {
  std::string text;        // the field holding the text; empty when prompt/completion are used
  std::string prompt;      // with completion: the two fields joined, the completion's tokens the
  std::string completion;  // only ones the loss counts (chat_record.h)
  std::string messages;    // the field holding a list of chat messages (chat_record.h)
};

struct RecordText {
  std::optional<std::string> text;  // the text, or nothing when the record is malformed
  std::string error;                // why, e.g. "field \"text\" is a number, expected a string"
};

RecordText jsonl_record_text(std::string_view line, const JsonlFields& fields);

// The JSON object of one line (keys in the file's order), or nothing with `error` set: "not
// valid JSON: ...", nesting deeper than kMaxJsonDepth, or "expected a JSON object, got ...".
std::optional<nlohmann::ordered_json> parse_jsonl_object(std::string_view line, std::string& error);
// The string of `field`, or nullptr with `error` set ("no field ...", "field ... is a number 5,
// expected a string").
const std::string* jsonl_string_field(const nlohmann::ordered_json& record, const std::string& field,
                                      std::string& error);
// "a number 7", "an array [1,2]", ... cut to a short excerpt.
std::string describe_jsonl_value(const nlohmann::ordered_json& v);

}  // namespace zt::data
