// The lexer of chat templates: template text -> a flat list of tokens, with the whitespace rules
// transformers compiles templates with (trim_blocks and lstrip_blocks: a block tag's own line
// leaves no indentation and no line break behind) and Jinja's "-" markers ({%- -%} {{- -}}
// {#- -#} strip the whitespace on that side). Text between tags is one Text token; each tag is
// an open token (BlockOpen "{%", ExprOpen "{{"), its expression tokens and a Close token.
// Comments leave nothing. Tested in tests/chat/test_chat_template_engine.cpp.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "zerotrain/core/error.h"

namespace zt::data {

// A template that cannot be parsed or rendered: "[chat_template] <name>:<line>:<column>: why".
class ChatTemplateError : public Error {
 public:
  explicit ChatTemplateError(const std::string& message) : Error("chat_template", message) {}
};

struct SourcePos {
  int line = 1;
  int column = 1;
};

struct TemplateToken {
  enum class Kind { Text, BlockOpen, ExprOpen, Close, Name, String, Int, Float, Op };
  Kind kind;
  std::string text;  // Text: the text; Name/Op: the spelling; String: the unescaped value;
                     // Int/Float: the digits
  SourcePos pos;
};

// Throws ChatTemplateError "<name>:<line>:<column>: ..." for an unclosed tag, comment or string,
// or a character no expression holds.
std::vector<TemplateToken> lex_chat_template(std::string_view source, const std::string& name);

}  // namespace zt::data
