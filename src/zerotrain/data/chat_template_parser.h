// The parser of chat templates: lexer tokens -> statements (chat_template_ast.h), with Jinja's
// operator precedence (or < and < not < comparisons and in < + - < ~ < * / // % < ** < unary,
// filters and tests binding tighter still). Throws ChatTemplateError naming the template, line and
// column for a tag it does not know or a malformed expression. Tested in
// tests/chat/test_chat_template_engine.cpp.
#pragma once

#include <string>
#include <vector>

#include "zerotrain/data/chat_template_ast.h"

namespace zt::data {

StmtList parse_chat_template(const std::vector<TemplateToken>& tokens, const std::string& name);

}  // namespace zt::data
