// What chat templates call: Jinja's filters (trim, length, tojson, upper, selectattr, map, join,
// default, ...) and tests (defined, none, string, mapping, equalto, ...) in
// chat_template_filters.cpp; Python's string and dict methods (strip, split, startswith, items,
// get, ...) and the global functions transformers provides (raise_exception, namespace, range,
// strftime_now) in chat_template_functions.cpp. Each throws TemplateRuntimeError, which the
// renderer turns into a ChatTemplateError at the caller's position. Tested in
// tests/chat/test_chat_template_engine.cpp.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "zerotrain/data/chat_template_value.h"

namespace zt::data {

// A failure inside a filter, test, method or function; `raised` for raise_exception.
struct TemplateRuntimeError {
  std::string message;
  bool raised = false;
};

struct BuiltinArgs {
  std::vector<TemplateValue> positional;
  std::vector<std::pair<std::string, TemplateValue>> keyword;
  // Argument `index` by position or `name` by keyword, or nullptr.
  const TemplateValue* get(size_t index, const char* name) const;
};

TemplateValue apply_filter(const std::string& name, const TemplateValue& value,
                           const BuiltinArgs& args);
bool apply_test(const std::string& name, const TemplateValue& value, const BuiltinArgs& args);
// obj.name(args): nothing when `obj` has no such method.
std::optional<TemplateValue> call_method(const TemplateValue& obj, const std::string& name,
                                         const BuiltinArgs& args);
// The global functions, by name (undefined for an unknown name).
bool is_global_function(const std::string& name);
TemplateValue call_global(const std::string& name, const BuiltinArgs& args);

// Python's str.strip(chars) family: which = 'l', 'r' or 'b' (both); chars empty: whitespace.
std::string strip_text(const std::string& s, const std::string& chars, char which);
// len(): code points of a string, items of a list or dict; throws for other kinds.
int64_t length_of(const TemplateValue& v);
// The items a for loop or a filter walks: a list's items, a dict's keys, a string's characters.
ValueList iterate(const TemplateValue& v);
// Python's <: numbers, strings or lists; throws for others.
bool less(const TemplateValue& a, const TemplateValue& b);

}  // namespace zt::data
