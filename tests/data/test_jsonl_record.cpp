// One JSON Lines record -> its text: the named string field, prompt + completion joined, and the
// message for each kind of malformed record.
#include <gtest/gtest.h>

#include "zerotrain/data/jsonl_record.h"

namespace zt::data {
namespace {

JsonlFields text_field(const std::string& name) {
  JsonlFields f;
  f.text = name;
  return f;
}

std::string error_of(std::string_view line, const JsonlFields& fields) {
  const RecordText r = jsonl_record_text(line, fields);
  EXPECT_FALSE(r.text.has_value()) << line;
  return r.error;
}

TEST(JsonlRecord, TextField) {
  const RecordText r = jsonl_record_text(
      R"({"id": 3, "text": "caf\u00e9\nline two \ud83d\ude42", "x": [1]})", text_field("text"));
  ASSERT_TRUE(r.text.has_value());
  EXPECT_EQ(*r.text, "caf\xC3\xA9\nline two \xF0\x9F\x99\x82");
  EXPECT_EQ(*jsonl_record_text(R"({"body": ""})"
                               "\r",
                               text_field("body"))
                 .text,
            "");
}

TEST(JsonlRecord, PromptAndCompletionAreJoined) {
  JsonlFields f;
  f.prompt = "prompt";
  f.completion = "completion";
  const RecordText r = jsonl_record_text(R"({"prompt": "Q: 2+2?", "completion": " A: 4"})", f);
  ASSERT_TRUE(r.text.has_value());
  EXPECT_EQ(*r.text, "Q: 2+2? A: 4");
  EXPECT_EQ(error_of(R"({"prompt": "Q"})", f), "no field \"completion\"");
}

TEST(JsonlRecord, MalformedRecords) {
  const JsonlFields f = text_field("text");
  EXPECT_EQ(error_of(R"({"txt": "a"})", f), "no field \"text\"");
  EXPECT_EQ(error_of(R"({"text": 7})", f), "field \"text\" is a number 7, expected a string");
  EXPECT_EQ(error_of(R"({"text": null})", f), "field \"text\" is null, expected a string");
  EXPECT_EQ(error_of(R"({"text": ["a", "b"]})", f),
            "field \"text\" is an array [\"a\",\"b\"], expected a string");
  EXPECT_EQ(error_of(R"(["text"])", f), "expected a JSON object, got an array [\"text\"]");
  const std::string broken = error_of(R"({"text": "unterminated)", f);
  EXPECT_EQ(broken.rfind("not valid JSON: parse error at line 1, column ", 0), 0u) << broken;
  EXPECT_EQ(error_of(R"({"text": "a"} {"text": "b"})", f).rfind("not valid JSON", 0), 0u);
  EXPECT_EQ(error_of("{\"text\": \"\xFF\"}", f).rfind("not valid JSON", 0), 0u);
  const std::string deep = std::string(70'000, '[') + std::string(70'000, ']');
  EXPECT_EQ(error_of(deep, f), "not valid JSON: nested deeper than 64 levels");
}

// A broken record of megabytes is quoted by an excerpt, not echoed whole.
TEST(JsonlRecord, BrokenHugeRecordIsQuotedByAnExcerpt) {
  const std::string huge = "{\"text\": \"" + std::string(2'000'000, 'a');
  const std::string error = error_of(huge, text_field("text"));
  EXPECT_EQ(error.rfind("not valid JSON: parse error at line 1, column 2000011", 0), 0u) << error;
  EXPECT_LT(error.size(), 300u) << error.substr(0, 300);
  EXPECT_NE(error.find("near \"aaaa"), std::string::npos) << error;
}

}  // namespace
}  // namespace zt::data
