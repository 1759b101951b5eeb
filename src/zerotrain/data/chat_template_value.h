// The values a chat template computes with: Jinja's undefined, none, booleans, integers, floats,
// strings, lists, dicts (in insertion order, as Python's) and namespaces, with Python's rules for
// truth, equality, str() and repr(), and transformers' tojson (json.dumps with ensure_ascii=False).
// Lists, dicts and namespaces are shared, as Python objects are. Tested in
// tests/chat/test_chat_template_engine.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace zt::data {

struct TemplateValue;
using ValueList = std::vector<TemplateValue>;
using ValueDict = std::vector<std::pair<std::string, TemplateValue>>;

struct TemplateValue {
  enum class Kind { Undefined, None, Bool, Int, Float, String, List, Dict, Namespace, Function };
  Kind kind = Kind::Undefined;
  bool boolean = false;
  int64_t integer = 0;
  double real = 0;
  std::string text;  // String; Function: its name; Undefined: why (for a later error)
  std::shared_ptr<ValueList> list;  // List
  std::shared_ptr<ValueDict> dict;  // Dict and Namespace

  static TemplateValue undefined(std::string why = "");
  static TemplateValue none();
  static TemplateValue of(bool b);
  static TemplateValue of(int64_t i);
  static TemplateValue of(double d);
  static TemplateValue of(std::string s);
  static TemplateValue of(ValueList l);
  static TemplateValue of(ValueDict d);
  static TemplateValue name_space(ValueDict d);
  static TemplateValue function(std::string name);

  bool is(Kind k) const { return kind == k; }
  bool is_number() const { return kind == Kind::Int || kind == Kind::Float; }
  bool is_mapping() const { return kind == Kind::Dict || kind == Kind::Namespace; }
  // A dict's or namespace's entry, or nothing.
  const TemplateValue* find(const std::string& key) const;
  void set(const std::string& key, TemplateValue v);  // dict or namespace
};

// Python's truth: undefined, none, false, 0, 0.0, "" and empty containers are false.
bool truthy(const TemplateValue& v);
// Python's ==, deep for lists and dicts; undefined equals only undefined.
bool equal(const TemplateValue& a, const TemplateValue& b);
// The text `{{ v }}` writes: Python's str() (None, True, 1.5, ['a', 1]); undefined writes "".
std::string to_text(const TemplateValue& v);
// Python's repr(): strings quoted.
std::string to_repr(const TemplateValue& v);
// Python's repr of a float (shortest round trip, "2.0", "1e-05").
std::string python_float(double d);
// json.dumps(v, ensure_ascii=False, indent=indent): ", " and ": " separators without an indent,
// "," and ": " with one. Throws ValueError for a value JSON cannot hold (undefined, namespace).
std::string to_json_text(const TemplateValue& v, std::optional<int> indent);
// "string", "integer", "list", "dict object" ...: for error messages, as Jinja names them.
std::string type_name(const TemplateValue& v);

TemplateValue from_json(const nlohmann::ordered_json& j);

// Strings are indexed by code point, as Python's: the code points of `s`, and back.
std::vector<std::string> code_points(const std::string& s);
size_t code_point_count(const std::string& s);

}  // namespace zt::data
