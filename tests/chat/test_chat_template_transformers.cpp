// The chat templates of the llama (3.2), mistral (v0.3) and qwen (2, 3) families, rendered by
// zerotrain's engine, against what transformers' apply_chat_template renders for the same
// conversations (tests/fixtures/chat_templates/expected.json, written by
// tools/chat/make_chat_template_fixtures.py): the same text, or an error where it raised one
// (raise_exception's message included).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "support/test_util.h"
#include "zerotrain/data/chat_template.h"

namespace zt::data {
namespace {

std::filesystem::path fixture_dir() {
  return test::fixtures_dir() / "chat_templates";
}

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ChatTemplateTransformers, EveryCaseRendersAsTransformers) {
  const auto expected = nlohmann::ordered_json::parse(read(fixture_dir() / "expected.json"));
  std::map<std::string, std::unique_ptr<ChatTemplate>> templates;
  int rendered = 0, raised = 0;
  for (const auto& c : expected.at("cases")) {
    const std::string name = c.at("template");
    if (!templates.count(name))
      templates[name] =
          std::make_unique<ChatTemplate>(name, read(fixture_dir() / (name + ".jinja")));
    ValueDict vars;
    if (!c.at("bos_token").is_null()) vars.emplace_back("bos_token", from_json(c.at("bos_token")));
    if (!c.at("eos_token").is_null()) vars.emplace_back("eos_token", from_json(c.at("eos_token")));
    vars.emplace_back("tools",
                      c.contains("tools") ? from_json(c.at("tools")) : TemplateValue::none());
    vars.emplace_back("documents", TemplateValue::none());
    vars.emplace_back("date_string", from_json(c.at("date_string")));
    const std::string label = str(name, " ", c.at("conversation").get<std::string>(),
                                  c.at("add_generation_prompt").get<bool>() ? " +gen" : "",
                                  c.contains("tools") ? " +tools" : "");
    const TemplateValue messages = from_json(c.at("messages"));
    if (c.contains("render")) {
      EXPECT_EQ(templates[name]->render(messages, c.at("add_generation_prompt"), vars),
                c.at("render").get<std::string>())
          << label;
      ++rendered;
    } else {
      try {
        templates[name]->render(messages, c.at("add_generation_prompt"), vars);
        ADD_FAILURE() << label << ": expected an error: " << c.at("error");
      } catch (const ChatTemplateError& e) {
        const std::string msg = e.what();
        EXPECT_EQ(msg.rfind("[chat_template] " + name + ":", 0), 0u) << msg;
        EXPECT_NE(msg.find(c.at("error").get<std::string>()), std::string::npos)
            << label << ": " << msg << "\nexpected: " << c.at("error");
        ++raised;
      }
    }
  }
  EXPECT_GE(rendered, 80);
  EXPECT_GE(raised, 4);
}

}  // namespace
}  // namespace zt::data
