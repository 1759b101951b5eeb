// ChatTemplate: lex + parse once, render per conversation.
#include "zerotrain/data/chat_template.h"

#include "zerotrain/data/chat_template_parser.h"
#include "zerotrain/data/chat_template_render.h"

namespace zt::data {

ChatTemplate::ChatTemplate(std::string name, const std::string& source)
    : name_(std::move(name)),
      program_(std::make_shared<const StmtList>(
          parse_chat_template(lex_chat_template(source, name_), name_))) {}

std::string ChatTemplate::render(const TemplateValue& messages, bool add_generation_prompt,
                                 const ValueDict& variables) const {
  ValueDict globals = variables;
  globals.emplace_back("messages", messages);
  globals.emplace_back("add_generation_prompt", TemplateValue::of(add_generation_prompt));
  return render_chat_template(*program_, name_, globals);
}

}  // namespace zt::data
