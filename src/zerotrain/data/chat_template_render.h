// The evaluator of chat templates: runs a parsed template over global variables and returns the
// text. Scopes as Jinja's: a for loop's body has its own (its sets do not leave the loop; a
// namespace() is how templates carry values out), if and the top level share theirs; `loop`
// holds index, index0, revindex, revindex0, first, last, length, previtem and nextitem. An
// undefined value writes nothing and is false, but an operator, an attribute or a call on it is an
// error. Every error is a ChatTemplateError "<name>:<line>:<column>: why". Tested in
// tests/chat/test_chat_template_engine.cpp and test_chat_template_transformers.cpp.
#pragma once

#include <string>

#include "zerotrain/data/chat_template_ast.h"

namespace zt::data {

std::string render_chat_template(const StmtList& program, const std::string& name,
                                 const ValueDict& globals);

}  // namespace zt::data
