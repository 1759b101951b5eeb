// Jinja's filters and tests as chat templates use them (see chat_template_builtins.h).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>

#include "zerotrain/core/error.h"
#include "zerotrain/data/chat_template_builtins.h"

namespace zt::data {
namespace {

using Kind = TemplateValue::Kind;

[[noreturn]] void fail(const std::string& why) {
  throw TemplateRuntimeError{why, false};
}

int64_t as_int(const TemplateValue& v, const char* what) {
  if (v.is(Kind::Int)) return v.integer;
  if (v.is(Kind::Bool)) return v.boolean;
  if (v.is(Kind::Float)) return static_cast<int64_t>(v.real);
  fail(str(what, ": expected an integer, got ", type_name(v)));
}

double as_number(const TemplateValue& v) {
  return v.is(Kind::Int) ? static_cast<double>(v.integer) : v.is(Kind::Bool) ? v.boolean : v.real;
}

std::string map_chars(std::string s, int (*f)(int)) {
  for (char& c : s)
    c = static_cast<char>(f(static_cast<unsigned char>(c)));
  return s;
}

// The value's attribute for selectattr/map: a dict entry, dotted paths allowed.
TemplateValue attribute_of(const TemplateValue& v, const std::string& path) {
  TemplateValue cur = v;
  size_t from = 0;
  while (true) {
    const size_t dot = path.find('.', from);
    const std::string key = path.substr(from, dot - from);
    const TemplateValue* next = cur.find(key);
    if (!next)
      return TemplateValue::undefined(str("'", type_name(cur), "' has no attribute '", key, "'"));
    cur = *next;
    if (dot == std::string::npos) return cur;
    from = dot + 1;
  }
}

// The test name and its arguments from a filter's arguments, starting at `first`.
std::pair<std::string, BuiltinArgs> test_from(const BuiltinArgs& args, size_t first) {
  BuiltinArgs rest;
  std::string test = "truthy";
  if (args.positional.size() > first) {
    if (!args.positional[first].is(Kind::String)) fail("the test's name must be a string");
    test = args.positional[first].text;
    rest.positional.assign(args.positional.begin() + static_cast<long>(first) + 1,
                           args.positional.end());
  }
  return {test, rest};
}

bool run_test(const std::string& test, const TemplateValue& v, const BuiltinArgs& args) {
  return test == "truthy" ? truthy(v) : apply_test(test, v, args);
}

}  // namespace

const TemplateValue* BuiltinArgs::get(size_t index, const char* name) const {
  for (const auto& [k, v] : keyword)
    if (k == name) return &v;
  return index < positional.size() ? &positional[index] : nullptr;
}

std::string strip_text(const std::string& s, const std::string& chars, char which) {
  const std::string set = chars.empty() ? std::string(" \t\n\r\f\v") : chars;
  size_t begin = 0, end = s.size();
  if (which != 'r')
    while (begin < end && set.find(s[begin]) != std::string::npos)
      ++begin;
  if (which != 'l')
    while (end > begin && set.find(s[end - 1]) != std::string::npos)
      --end;
  return s.substr(begin, end - begin);
}

int64_t length_of(const TemplateValue& v) {
  switch (v.kind) {
    case Kind::Undefined:
      return 0;
    case Kind::String:
      return static_cast<int64_t>(code_point_count(v.text));
    case Kind::List:
      return static_cast<int64_t>(v.list->size());
    case Kind::Dict:
    case Kind::Namespace:
      return static_cast<int64_t>(v.dict->size());
    default:
      fail(str("object of type '", type_name(v), "' has no len()"));
  }
}

ValueList iterate(const TemplateValue& v) {
  switch (v.kind) {
    case Kind::Undefined:
      return {};
    case Kind::List:
      return *v.list;
    case Kind::Dict: {
      ValueList keys;
      for (const auto& [k, _] : *v.dict)
        keys.push_back(TemplateValue::of(k));
      return keys;
    }
    case Kind::String: {
      ValueList chars;
      for (auto& c : code_points(v.text))
        chars.push_back(TemplateValue::of(std::move(c)));
      return chars;
    }
    default:
      fail(str("'", type_name(v), "' object is not iterable"));
  }
}

bool less(const TemplateValue& a, const TemplateValue& b) {
  if ((a.is_number() || a.is(Kind::Bool)) && (b.is_number() || b.is(Kind::Bool)))
    return as_number(a) < as_number(b);
  if (a.is(Kind::String) && b.is(Kind::String)) return a.text < b.text;
  if (a.is(Kind::List) && b.is(Kind::List)) {
    for (size_t i = 0; i < std::min(a.list->size(), b.list->size()); ++i) {
      if (less((*a.list)[i], (*b.list)[i])) return true;
      if (less((*b.list)[i], (*a.list)[i])) return false;
    }
    return a.list->size() < b.list->size();
  }
  fail(str("'<' not supported between instances of '", type_name(a), "' and '", type_name(b), "'"));
}

TemplateValue apply_filter(const std::string& name, const TemplateValue& v,
                           const BuiltinArgs& args) {
  auto text_arg = [&](size_t i, const char* key, std::string fallback) {
    const TemplateValue* a = args.get(i, key);
    return a ? to_text(*a) : fallback;
  };
  if (name == "trim")
    return TemplateValue::of(strip_text(to_text(v), text_arg(0, "chars", ""), 'b'));
  if (name == "length" || name == "count") return TemplateValue::of(length_of(v));
  if (name == "tojson") {
    const TemplateValue* indent = args.get(0, "indent");
    std::optional<int> n;
    if (indent && !indent->is(Kind::None)) n = static_cast<int>(as_int(*indent, "tojson indent"));
    try {
      return TemplateValue::of(to_json_text(v, n));
    } catch (const ValueError& e) {
      fail(e.what());
    }
  }
  if (name == "upper") return TemplateValue::of(map_chars(to_text(v), ::toupper));
  if (name == "lower") return TemplateValue::of(map_chars(to_text(v), ::tolower));
  if (name == "capitalize" || name == "title") {
    auto m = call_method(TemplateValue::of(to_text(v)), name, {});
    return *m;
  }
  if (name == "string") return TemplateValue::of(to_text(v));
  if (name == "safe" || name == "e" || name == "escape") return v;  // no autoescaping
  if (name == "int") {
    if (v.is(Kind::String)) {
      try {
        return TemplateValue::of(static_cast<int64_t>(std::stoll(strip_text(v.text, "", 'b'))));
      } catch (const std::exception&) {
        return TemplateValue::of(int64_t{0});
      }
    }
    return TemplateValue::of(v.is_number() || v.is(Kind::Bool) ? as_int(v, "int") : int64_t{0});
  }
  if (name == "float") {
    if (v.is(Kind::String)) {
      try {
        return TemplateValue::of(std::stod(v.text));
      } catch (const std::exception&) {
        return TemplateValue::of(0.0);
      }
    }
    return TemplateValue::of(v.is_number() || v.is(Kind::Bool) ? as_number(v) : 0.0);
  }
  if (name == "abs") {
    if (v.is(Kind::Int)) {
      if (v.integer == INT64_MIN) fail("integer overflow in abs (template integers are 64-bit)");
      return TemplateValue::of(v.integer < 0 ? -v.integer : v.integer);
    }
    return TemplateValue::of(std::fabs(as_number(v)));
  }
  if (name == "list") return TemplateValue::of(iterate(v));
  if (name == "first" || name == "last") {
    ValueList items = iterate(v);
    if (items.empty())
      return TemplateValue::undefined(str("No ", name, " item, sequence was empty."));
    return name == "first" ? items.front() : items.back();
  }
  if (name == "reverse") {
    if (v.is(Kind::String)) {
      auto cps = code_points(v.text);
      std::string out;
      for (auto it = cps.rbegin(); it != cps.rend(); ++it)
        out += *it;
      return TemplateValue::of(out);
    }
    ValueList items = iterate(v);
    std::reverse(items.begin(), items.end());
    return TemplateValue::of(std::move(items));
  }
  if (name == "join") {
    const std::string sep = text_arg(0, "d", "");
    const TemplateValue* attr = args.get(1, "attribute");
    std::string out;
    bool first = true;
    for (const TemplateValue& item : iterate(v)) {
      if (!first) out += sep;
      first = false;
      out += to_text(attr ? attribute_of(item, to_text(*attr)) : item);
    }
    return TemplateValue::of(out);
  }
  if (name == "default" || name == "d") {
    const TemplateValue* fallback = args.get(0, "default_value");
    const TemplateValue* boolean = args.get(1, "boolean");
    const bool use = boolean && truthy(*boolean) ? !truthy(v) : v.is(Kind::Undefined);
    if (!use) return v;
    return fallback ? *fallback : TemplateValue::of(std::string());
  }
  if (name == "replace") {
    auto m = call_method(TemplateValue::of(to_text(v)), "replace", args);
    return *m;
  }
  if (name == "items") {
    if (!v.is_mapping()) fail(str("items: expected a dict, got ", type_name(v)));
    return *call_method(v, "items", {});
  }
  if (name == "selectattr" || name == "rejectattr" || name == "select" || name == "reject") {
    const bool by_attr = name.size() > 6;
    const bool keep_true = name[0] == 's';
    std::string attr;
    if (by_attr) {
      if (args.positional.empty() || !args.positional[0].is(Kind::String))
        fail(str(name, ": expected an attribute name"));
      attr = args.positional[0].text;
    }
    const auto [test, rest] = test_from(args, by_attr ? 1 : 0);
    ValueList out;
    for (const TemplateValue& item : iterate(v))
      if (run_test(test, by_attr ? attribute_of(item, attr) : item, rest) == keep_true)
        out.push_back(item);
    return TemplateValue::of(std::move(out));
  }
  if (name == "map") {
    ValueList out;
    if (const TemplateValue* attr = args.get(99, "attribute")) {
      const TemplateValue* fallback = args.get(99, "default");
      for (const TemplateValue& item : iterate(v)) {
        TemplateValue a = attribute_of(item, to_text(*attr));
        out.push_back(a.is(Kind::Undefined) && fallback ? *fallback : a);
      }
      return TemplateValue::of(std::move(out));
    }
    if (args.positional.empty() || !args.positional[0].is(Kind::String))
      fail("map: expected a filter name or attribute=");
    BuiltinArgs rest;
    rest.positional.assign(args.positional.begin() + 1, args.positional.end());
    rest.keyword = args.keyword;
    for (const TemplateValue& item : iterate(v))
      out.push_back(apply_filter(args.positional[0].text, item, rest));
    return TemplateValue::of(std::move(out));
  }
  if (name == "unique") {
    ValueList out;
    for (const TemplateValue& item : iterate(v))
      if (std::none_of(out.begin(), out.end(),
                       [&](const TemplateValue& o) { return equal(o, item); }))
        out.push_back(item);
    return TemplateValue::of(std::move(out));
  }
  if (name == "sort") {
    ValueList items = iterate(v);
    const TemplateValue* reverse = args.get(0, "reverse");
    const TemplateValue* attr = args.get(2, "attribute");
    std::stable_sort(
        items.begin(), items.end(), [&](const TemplateValue& a, const TemplateValue& b) {
          return attr ? less(attribute_of(a, to_text(*attr)), attribute_of(b, to_text(*attr)))
                      : less(a, b);
        });
    if (reverse && truthy(*reverse)) std::reverse(items.begin(), items.end());
    return TemplateValue::of(std::move(items));
  }
  if (name == "sum") {
    TemplateValue total = TemplateValue::of(int64_t{0});
    for (const TemplateValue& item : iterate(v)) {
      if (total.is(Kind::Int) && item.is(Kind::Int))
        total.integer += item.integer;
      else
        total = TemplateValue::of(as_number(total) + as_number(item));
    }
    return total;
  }
  if (name == "indent") {
    const int64_t width = args.get(0, "width") ? as_int(*args.get(0, "width"), "indent") : 4;
    const TemplateValue* first = args.get(1, "first");
    const std::string pad(static_cast<size_t>(std::max<int64_t>(width, 0)), ' ');
    std::string s = to_text(v), out = first && truthy(*first) ? pad : "";
    for (size_t i = 0; i < s.size(); ++i) {
      out += s[i];
      if (s[i] == '\n' && i + 1 < s.size() && s[i + 1] != '\n') out += pad;
    }
    return TemplateValue::of(out);
  }
  fail(str("no filter named '", name, "'"));
}

bool apply_test(const std::string& name, const TemplateValue& v, const BuiltinArgs& args) {
  const TemplateValue* other = args.get(0, "value");
  auto need_other = [&]() -> const TemplateValue& {
    if (!other) fail(str("test '", name, "' needs an argument"));
    return *other;
  };
  if (name == "defined") return !v.is(Kind::Undefined);
  if (name == "undefined") return v.is(Kind::Undefined);
  if (name == "none") return v.is(Kind::None);
  if (name == "boolean") return v.is(Kind::Bool);
  if (name == "true") return v.is(Kind::Bool) && v.boolean;
  if (name == "false") return v.is(Kind::Bool) && !v.boolean;
  if (name == "string") return v.is(Kind::String);
  if (name == "number") return v.is_number();
  if (name == "integer") return v.is(Kind::Int);
  if (name == "float") return v.is(Kind::Float);
  if (name == "mapping") return v.is(Kind::Dict);
  if (name == "iterable") return v.is(Kind::List) || v.is(Kind::Dict) || v.is(Kind::String);
  if (name == "sequence") return v.is(Kind::List) || v.is(Kind::Dict) || v.is(Kind::String);
  if (name == "callable") return v.is(Kind::Function);
  if (name == "lower") return v.is(Kind::String) && map_chars(v.text, ::tolower) == v.text;
  if (name == "upper") return v.is(Kind::String) && map_chars(v.text, ::toupper) == v.text;
  if (name == "even" || name == "odd") {
    const int64_t n = as_int(v, name.c_str());
    return (n % 2 == 0) == (name == "even");
  }
  if (name == "divisibleby") {
    const int64_t d = as_int(need_other(), "divisibleby");
    return d != 0 && as_int(v, "divisibleby") % d == 0;
  }
  if (name == "equalto" || name == "eq" || name == "==") return equal(v, need_other());
  if (name == "ne" || name == "!=") return !equal(v, need_other());
  if (name == "lt" || name == "lessthan" || name == "<") return less(v, need_other());
  if (name == "gt" || name == "greaterthan" || name == ">") return less(need_other(), v);
  if (name == "le" || name == "<=") return !less(need_other(), v);
  if (name == "ge" || name == ">=") return !less(v, need_other());
  if (name == "sameas") {
    const TemplateValue& o = need_other();
    if (v.kind != o.kind) return false;
    if (v.is(Kind::List)) return v.list == o.list;
    if (v.is_mapping()) return v.dict == o.dict;
    return equal(v, o);
  }
  if (name == "in") {
    const TemplateValue& o = need_other();
    if (o.is(Kind::String)) return v.is(Kind::String) && o.text.find(v.text) != std::string::npos;
    if (o.is_mapping()) return v.is(Kind::String) && o.find(v.text);
    for (const TemplateValue& item : iterate(o))
      if (equal(item, v)) return true;
    return false;
  }
  fail(str("no test named '", name, "'"));
}

}  // namespace zt::data
