// libFuzzer target: a chat template (tokenizer_config.json's "chat_template", text a downloaded
// model brings). The input is parsed as data::ChatTemplate and rendered over a short conversation
// with and without the generation prompt. Any input must render or throw a zt::Error. See
// docs/fuzzing.md.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "zerotrain/core/error.h"
#include "zerotrain/data/chat_template.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const zt::data::TemplateValue messages = zt::data::from_json(nlohmann::ordered_json::parse(
      R"([{"role": "system", "content": "s"}, {"role": "user", "content": "u"},
          {"role": "assistant", "content": "a", "tool_calls": [{"function": {"name": "f"}}]}])"));
  const zt::data::ValueDict vars = {
      {"bos_token", zt::data::TemplateValue::of(std::string("<s>"))},
      {"eos_token", zt::data::TemplateValue::of(std::string("</s>"))}};
  try {
    const zt::data::ChatTemplate t("fuzz", std::string(reinterpret_cast<const char*>(data), size));
    t.render(messages, false, vars);
    t.render(messages, true, vars);
  } catch (const zt::Error&) {
  }
  return 0;
}
