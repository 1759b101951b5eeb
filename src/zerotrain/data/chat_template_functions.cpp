// Python's string and dict methods and transformers' global template functions (see
// chat_template_builtins.h).
#include <cctype>
#include <ctime>

#include "zerotrain/core/error.h"
#include "zerotrain/data/chat_template_builtins.h"

namespace zt::data {
namespace {

using Kind = TemplateValue::Kind;

[[noreturn]] void fail(const std::string& why) {
  throw TemplateRuntimeError{why, false};
}

std::string string_arg(const BuiltinArgs& args, size_t i, const char* name, const char* method) {
  const TemplateValue* a = args.get(i, name);
  if (!a) fail(str(method, "() needs the argument '", name, "'"));
  if (!a->is(Kind::String))
    fail(str(method, "(): '", name, "' must be a string, got ", type_name(*a)));
  return a->text;
}

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

ValueList split(const std::string& s, const TemplateValue* sep, int64_t max_split) {
  ValueList out;
  if (!sep || sep->is(Kind::None)) {  // runs of whitespace, no empty parts
    size_t i = 0;
    while (i < s.size()) {
      while (i < s.size() && is_space(s[i]))
        ++i;
      if (i >= s.size()) break;
      size_t j = i;
      if (max_split >= 0 && static_cast<int64_t>(out.size()) >= max_split) {
        std::string rest = s.substr(i);
        while (!rest.empty() && is_space(rest.back()))
          rest.pop_back();
        out.push_back(TemplateValue::of(rest));
        break;
      }
      while (j < s.size() && !is_space(s[j]))
        ++j;
      out.push_back(TemplateValue::of(s.substr(i, j - i)));
      i = j;
    }
    return out;
  }
  if (!sep->is(Kind::String) || sep->text.empty()) fail("split(): empty or non-string separator");
  size_t from = 0;
  while (true) {
    const size_t at = (max_split >= 0 && static_cast<int64_t>(out.size()) >= max_split)
                          ? std::string::npos
                          : s.find(sep->text, from);
    if (at == std::string::npos) {
      out.push_back(TemplateValue::of(s.substr(from)));
      return out;
    }
    out.push_back(TemplateValue::of(s.substr(from, at - from)));
    from = at + sep->text.size();
  }
}

bool affix_matches(const std::string& s, const TemplateValue& affix, bool prefix) {
  auto one = [&](const std::string& a) {
    return a.size() <= s.size() && (prefix ? s.compare(0, a.size(), a) == 0
                                           : s.compare(s.size() - a.size(), a.size(), a) == 0);
  };
  if (affix.is(Kind::String)) return one(affix.text);
  if (affix.is(Kind::List)) {
    for (const TemplateValue& a : *affix.list)
      if (a.is(Kind::String) && one(a.text)) return true;
    return false;
  }
  fail(str(prefix ? "startswith" : "endswith", "(): expected a string, got ", type_name(affix)));
}

std::optional<TemplateValue> string_method(const std::string& s, const std::string& name,
                                           const BuiltinArgs& args) {
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    const TemplateValue* chars = args.get(0, "chars");
    const std::string set = chars && chars->is(Kind::String) ? chars->text : "";
    return TemplateValue::of(strip_text(s, set, name[0] == 's' ? 'b' : name[0]));
  }
  if (name == "split") {
    const TemplateValue* max = args.get(1, "maxsplit");
    return TemplateValue::of(
        split(s, args.get(0, "sep"), max && max->is(Kind::Int) ? max->integer : -1));
  }
  if (name == "startswith" || name == "endswith") {
    const TemplateValue* affix = args.get(0, "prefix");
    if (!affix) fail(str(name, "() needs an argument"));
    return TemplateValue::of(affix_matches(s, *affix, name == "startswith"));
  }
  if (name == "upper" || name == "lower") {
    std::string out = s;
    for (char& c : out)
      c = static_cast<char>(name == "upper" ? std::toupper(static_cast<unsigned char>(c))
                                            : std::tolower(static_cast<unsigned char>(c)));
    return TemplateValue::of(out);
  }
  if (name == "capitalize" || name == "title") {
    std::string out = s;
    bool start = true;
    for (size_t i = 0; i < out.size(); ++i) {
      const auto c = static_cast<unsigned char>(out[i]);
      if (name == "capitalize") {
        out[i] = static_cast<char>(i == 0 ? std::toupper(c) : std::tolower(c));
      } else {
        out[i] = static_cast<char>(start ? std::toupper(c) : std::tolower(c));
        start = !std::isalpha(c);
      }
    }
    return TemplateValue::of(out);
  }
  if (name == "replace") {
    const std::string from = string_arg(args, 0, "old", "replace");
    const std::string to = string_arg(args, 1, "new", "replace");
    const TemplateValue* count = args.get(2, "count");
    int64_t left = count && count->is(Kind::Int) ? count->integer : -1;
    std::string out;
    size_t at = 0;
    if (from.empty()) return TemplateValue::of(s);
    while (left != 0) {
      const size_t hit = s.find(from, at);
      if (hit == std::string::npos) break;
      out += s.substr(at, hit - at) + to;
      at = hit + from.size();
      --left;
    }
    return TemplateValue::of(out + s.substr(at));
  }
  if (name == "find") {
    const size_t at = s.find(string_arg(args, 0, "sub", "find"));
    return TemplateValue::of(at == std::string::npos
                                 ? int64_t{-1}
                                 : static_cast<int64_t>(code_point_count(s.substr(0, at))));
  }
  if (name == "join") {
    const TemplateValue* items = args.get(0, "iterable");
    if (!items) fail("join() needs an argument");
    std::string out;
    bool first = true;
    for (const TemplateValue& item : iterate(*items)) {
      if (!first) out += s;
      first = false;
      out += to_text(item);
    }
    return TemplateValue::of(out);
  }
  return std::nullopt;
}

std::optional<TemplateValue> dict_method(const TemplateValue& d, const std::string& name,
                                         const BuiltinArgs& args) {
  if (name == "items" || name == "keys" || name == "values") {
    ValueList out;
    for (const auto& [k, v] : *d.dict)
      out.push_back(name == "keys"     ? TemplateValue::of(k)
                    : name == "values" ? v
                                       : TemplateValue::of(ValueList{TemplateValue::of(k), v}));
    return TemplateValue::of(std::move(out));
  }
  if (name == "get") {
    const std::string key = string_arg(args, 0, "key", "get");
    if (const TemplateValue* v = d.find(key)) return *v;
    const TemplateValue* fallback = args.get(1, "default");
    return fallback ? *fallback : TemplateValue::none();
  }
  return std::nullopt;
}

}  // namespace

std::optional<TemplateValue> call_method(const TemplateValue& obj, const std::string& name,
                                         const BuiltinArgs& args) {
  if (obj.is(Kind::String)) return string_method(obj.text, name, args);
  if (obj.is(Kind::Dict)) return dict_method(obj, name, args);
  return std::nullopt;
}

bool is_global_function(const std::string& name) {
  return name == "raise_exception" || name == "namespace" || name == "range" ||
         name == "strftime_now" || name == "dict";
}

TemplateValue call_global(const std::string& name, const BuiltinArgs& args) {
  if (name == "raise_exception") {
    const TemplateValue* message = args.get(0, "message");
    throw TemplateRuntimeError{message ? to_text(*message) : std::string(), true};
  }
  if (name == "namespace" || name == "dict") {
    ValueDict d;
    if (!args.positional.empty()) {
      if (!args.positional[0].is(Kind::Dict))
        fail(str(name, "(): expected keyword arguments or a dict"));
      d = *args.positional[0].dict;
    }
    for (const auto& [k, v] : args.keyword)
      d.emplace_back(k, v);
    return name == "dict" ? TemplateValue::of(std::move(d))
                          : TemplateValue::name_space(std::move(d));
  }
  if (name == "range") {
    std::vector<int64_t> n;
    for (const TemplateValue& a : args.positional) {
      if (!a.is(Kind::Int)) fail(str("range(): expected integers, got ", type_name(a)));
      n.push_back(a.integer);
    }
    if (n.empty() || n.size() > 3) fail("range() takes 1 to 3 integers");
    const int64_t start = n.size() > 1 ? n[0] : 0, stop = n.size() > 1 ? n[1] : n[0];
    const int64_t step = n.size() > 2 ? n[2] : 1;
    if (step == 0) fail("range(): the step must not be zero");
    if ((stop - start) / step > 100000) fail("range(): more than 100000 items");
    ValueList out;
    for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step)
      out.push_back(TemplateValue::of(i));
    return TemplateValue::of(std::move(out));
  }
  if (name == "strftime_now") {
    const TemplateValue* format = args.get(0, "format");
    if (!format || !format->is(Kind::String)) fail("strftime_now() needs a format string");
    const std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    char buf[256];
    const size_t n = std::strftime(buf, sizeof buf, format->text.c_str(), &local);
    return TemplateValue::of(std::string(buf, n));
  }
  fail(str("'", name, "' is undefined"));
}

}  // namespace zt::data
