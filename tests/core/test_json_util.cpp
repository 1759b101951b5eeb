// The JSON helpers every reader uses, on hostile input: nesting past kMaxJsonDepth is one
// FormatError line (70,000 levels used to overflow the stack in the error message), describe_json
// quotes a short, escaped excerpt of any value however large or deep, quote_excerpt never lets a
// raw control or invalid byte through.
#include <gtest/gtest.h>

#include <string>

#include "zerotrain/core/io_error.h"
#include "zerotrain/core/json_util.h"

namespace zt {
namespace {

std::string nested_arrays(int depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

// Every byte printable ASCII, no newline: safe to print on a terminal.
bool printable_line(const std::string& s) {
  for (unsigned char ch : s)
    if (ch < 0x20 || ch > 0x7e) return false;
  return true;
}

TEST(JsonUtil, DepthAtTheLimitParses) {
  EXPECT_NO_THROW(parse_json(nested_arrays(kMaxJsonDepth), "test", "ok.json"));
}

// The one depth check every reader's parse callback calls, and its one message.
TEST(JsonUtil, DepthCheckStopsAtTheFirstLevelPastTheLimit) {
  using Event = nlohmann::json::parse_event_t;
  EXPECT_NO_THROW(check_json_depth(kMaxJsonDepth - 1, Event::array_start));
  EXPECT_NO_THROW(check_json_depth(kMaxJsonDepth + 5, Event::value));
  EXPECT_THROW(check_json_depth(kMaxJsonDepth, Event::array_start), JsonTooDeep);
  EXPECT_THROW(check_json_depth(kMaxJsonDepth, Event::object_start), JsonTooDeep);
  EXPECT_EQ(json_too_deep_message(), "not valid JSON: nested deeper than 64 levels");
}

TEST(JsonUtil, DeeperThanTheLimitIsOneLine) {
  for (const std::string& text :
       {nested_arrays(kMaxJsonDepth + 1), nested_arrays(70000),
        "{\"a\": " + nested_arrays(70000) + "}", std::string(70000, '[')}) {
    try {
      parse_json(text, "test", "deep.json");
      FAIL() << "accepted nesting of " << text.size() << " bytes";
    } catch (const FormatError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("[test] deep.json: not valid JSON: nested deeper than 64 levels"),
                std::string::npos)
          << msg.substr(0, 200);
      EXPECT_LT(msg.size(), 200u);
    }
  }
}

TEST(JsonUtil, DescribeJsonIsShortForHugeAndDeepValues) {
  nlohmann::json deep = nlohmann::json::array();
  nlohmann::json* leaf = &deep;
  for (int i = 0; i < 100000; ++i) {
    leaf->push_back(nlohmann::json::array());
    leaf = &(*leaf)[0];
  }
  const std::string d = describe_json(deep);
  EXPECT_EQ(d.rfind("an array [[[", 0), 0u) << d;
  EXPECT_LT(d.size(), 80u) << d;

  nlohmann::json wide = nlohmann::json::array();
  for (int i = 0; i < 100000; ++i)
    wide.push_back(i);
  const std::string w = describe_json(wide);
  EXPECT_EQ(w.rfind("an array [0, 1, 2", 0), 0u) << w;
  EXPECT_NE(w.find("...]"), std::string::npos) << w;
  EXPECT_LT(w.size(), 80u) << w;

  const std::string s = describe_json(std::string(1 << 20, 'x'));
  EXPECT_EQ(s, "a string \"" + std::string(40, 'x') + "\"...");
  EXPECT_EQ(describe_json(7), "an integer 7");
  EXPECT_EQ(describe_json(nullptr), "null");
  EXPECT_EQ(describe_json(nlohmann::json::object({{"a", 1}})), "an object {\"a\": 1}");
}

TEST(JsonUtil, ExcerptsEscapeControlAndInvalidBytes) {
  EXPECT_EQ(quote_excerpt("plain"), "\"plain\"");
  const std::string raw = std::string("a\0b\x1b[2J\n\xff\xfe", 10);
  const std::string q = quote_excerpt(raw);
  EXPECT_TRUE(printable_line(q)) << q;
  EXPECT_NE(q.find("\\u0000"), std::string::npos) << q;
  EXPECT_NE(q.find("\\u001b"), std::string::npos) << q;
  EXPECT_NE(q.find("\\ufffd"), std::string::npos) << q;
  // A cut through a UTF-8 sequence is replaced, not left as half a character.
  const std::string cut = quote_excerpt("ab\xc3\xa9", 3);
  EXPECT_TRUE(printable_line(cut)) << cut;
  EXPECT_EQ(cut, "\"ab\\ufffd\"...");
  EXPECT_TRUE(printable_line(describe_json(nlohmann::json::object({{raw, raw}}))));
}

}  // namespace
}  // namespace zt
