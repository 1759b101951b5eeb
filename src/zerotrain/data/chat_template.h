// A chat template (tokenizer_config.json's "chat_template", a Jinja template) ready to render
// conversations as transformers' apply_chat_template(tokenize=False) does: parsed once, rendered
// with `messages`, `add_generation_prompt` and the other variables transformers passes
// (bos_token, eos_token, tools, ...). The supported Jinja is what the templates of the llama,
// mistral and qwen2 families use; see chat_template_lexer.h, chat_template_parser.h,
// chat_template_render.h and chat_template_builtins.h. Errors name the template and the line
// and column: "[chat_template] <name>:<line>:<column>: why". Tested in
// tests/chat/test_chat_template_engine.cpp and test_chat_template_transformers.cpp.
#pragma once

#include <memory>
#include <string>

#include "zerotrain/data/chat_template_ast.h"

namespace zt::data {

class ChatTemplate {
 public:
  // `name` appears in every error (e.g. "tok/tokenizer_config.json chat_template").
  ChatTemplate(std::string name, const std::string& source);

  const std::string& name() const { return name_; }
  // `messages`: a list of {"role", "content", ...} dicts; `variables`: bos_token, eos_token,
  // tools, date_string, ... as transformers passes them.
  std::string render(const TemplateValue& messages, bool add_generation_prompt,
                     const ValueDict& variables) const;

 private:
  std::string name_;
  std::shared_ptr<const StmtList> program_;
};

}  // namespace zt::data
