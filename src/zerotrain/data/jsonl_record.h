// The text of one JSON Lines record for `zerotrain data prepare`: the string of a named field (a
// dataset with a "text" column, as the Hugging Face Trainer examples use), or a prompt and a
// completion field joined into one text as TRL's SFTTrainer tokenizes prompt-completion data
// (prompt + completion, one string). A record that is not a JSON object or lacks a string field
// gives an error message instead, for `data prepare` to skip and report with its line number.
// Tested in tests/data_pipeline/test_jsonl_record.cpp.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace zt::data {

struct JsonlFields {
  std::string text;        // the field holding the text; empty when prompt/completion are used
  std::string prompt;      // with completion: the two fields joined
  std::string completion;  // (tokens only: which tokens are the prompt is not recorded yet)
};

struct RecordText {
  std::optional<std::string> text;  // the text, or nothing when the record is malformed
  std::string error;                // why, e.g. "field \"text\" is a number, expected a string"
};

RecordText jsonl_record_text(std::string_view line, const JsonlFields& fields);

}  // namespace zt::data
