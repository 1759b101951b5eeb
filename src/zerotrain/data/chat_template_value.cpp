// TemplateValue: constructors, Python's truth, equality, str()/repr() and json.dumps.
#include "zerotrain/data/chat_template_value.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "zerotrain/core/error.h"
#include "zerotrain/data/utf8.h"

namespace zt::data {

using Kind = TemplateValue::Kind;

TemplateValue TemplateValue::undefined(std::string why) {
  TemplateValue v;
  v.text = std::move(why);
  return v;
}
TemplateValue TemplateValue::none() {
  TemplateValue v;
  v.kind = Kind::None;
  return v;
}
TemplateValue TemplateValue::of(bool b) {
  TemplateValue v;
  v.kind = Kind::Bool;
  v.boolean = b;
  return v;
}
TemplateValue TemplateValue::of(int64_t i) {
  TemplateValue v;
  v.kind = Kind::Int;
  v.integer = i;
  return v;
}
TemplateValue TemplateValue::of(double d) {
  TemplateValue v;
  v.kind = Kind::Float;
  v.real = d;
  return v;
}
TemplateValue TemplateValue::of(std::string s) {
  TemplateValue v;
  v.kind = Kind::String;
  v.text = std::move(s);
  return v;
}
TemplateValue TemplateValue::of(ValueList l) {
  TemplateValue v;
  v.kind = Kind::List;
  v.list = std::make_shared<ValueList>(std::move(l));
  return v;
}
TemplateValue TemplateValue::of(ValueDict d) {
  TemplateValue v;
  v.kind = Kind::Dict;
  v.dict = std::make_shared<ValueDict>(std::move(d));
  return v;
}
TemplateValue TemplateValue::name_space(ValueDict d) {
  TemplateValue v = of(std::move(d));
  v.kind = Kind::Namespace;
  return v;
}
TemplateValue TemplateValue::function(std::string name) {
  TemplateValue v;
  v.kind = Kind::Function;
  v.text = std::move(name);
  return v;
}

const TemplateValue* TemplateValue::find(const std::string& key) const {
  if (!is_mapping()) return nullptr;
  for (const auto& [k, v] : *dict)
    if (k == key) return &v;
  return nullptr;
}

void TemplateValue::set(const std::string& key, TemplateValue v) {
  for (auto& [k, old] : *dict)
    if (k == key) {
      old = std::move(v);
      return;
    }
  dict->emplace_back(key, std::move(v));
}

bool truthy(const TemplateValue& v) {
  switch (v.kind) {
    case Kind::Undefined:
    case Kind::None:
      return false;
    case Kind::Bool:
      return v.boolean;
    case Kind::Int:
      return v.integer != 0;
    case Kind::Float:
      return v.real != 0.0;
    case Kind::String:
      return !v.text.empty();
    case Kind::List:
      return !v.list->empty();
    case Kind::Dict:
      return !v.dict->empty();
    case Kind::Namespace:
    case Kind::Function:
      return true;
  }
  return false;
}

bool equal(const TemplateValue& a, const TemplateValue& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is(Kind::Int) && b.is(Kind::Int)) return a.integer == b.integer;
    const double x = a.is(Kind::Int) ? static_cast<double>(a.integer) : a.real;
    const double y = b.is(Kind::Int) ? static_cast<double>(b.integer) : b.real;
    return x == y;
  }
  // Python's True == 1: a bool compares as an integer with numbers.
  if (a.is(Kind::Bool) && b.is_number()) return equal(TemplateValue::of(int64_t{a.boolean}), b);
  if (b.is(Kind::Bool) && a.is_number()) return equal(a, TemplateValue::of(int64_t{b.boolean}));
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Kind::Undefined:
    case Kind::None:
      return true;
    case Kind::Bool:
      return a.boolean == b.boolean;
    case Kind::String:
    case Kind::Function:
      return a.text == b.text;
    case Kind::List:
      if (a.list->size() != b.list->size()) return false;
      for (size_t i = 0; i < a.list->size(); ++i)
        if (!equal((*a.list)[i], (*b.list)[i])) return false;
      return true;
    case Kind::Dict:
      if (a.dict->size() != b.dict->size()) return false;
      for (const auto& [k, v] : *a.dict) {
        const TemplateValue* other = b.find(k);
        if (!other || !equal(v, *other)) return false;
      }
      return true;
    case Kind::Namespace:
      return a.dict == b.dict;
    default:
      return false;
  }
}

std::string python_float(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  if (d == 0) return std::signbit(d) ? "-0.0" : "0.0";
  // The shortest round-trip digits and exponent, then Python's choice of notation.
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string sci(buf, r.ptr);
  const size_t e = sci.find('e');
  const int exponent = std::stoi(sci.substr(e + 1));
  std::string digits;
  const bool negative = sci[0] == '-';
  for (char c : sci.substr(0, e))
    if (c >= '0' && c <= '9') digits.push_back(c);
  std::string out = negative ? "-" : "";
  if (exponent >= -5 + 1 && exponent < 16) {
    const auto point = static_cast<size_t>(exponent + 1);  // digits before the point
    if (exponent < 0) {
      out.append("0.").append(static_cast<size_t>(-exponent - 1), '0').append(digits);
    } else if (point >= digits.size()) {
      out.append(digits).append(point - digits.size(), '0').append(".0");
    } else {
      out.append(digits, 0, point).append(1, '.').append(digits, point);
    }
    return out;
  }
  out.append(digits, 0, 1);
  if (digits.size() > 1) out.append(1, '.').append(digits, 1);
  char exp[16];
  std::snprintf(exp, sizeof exp, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
  return out + exp;
}

namespace {

std::string repr_string(const std::string& s) {
  // Python prefers single quotes unless the text holds one and no double quote.
  const bool use_double = s.find('\'') != std::string::npos && s.find('"') == std::string::npos;
  const char q = use_double ? '"' : '\'';
  std::string out(1, q);
  for (unsigned char c : s) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == static_cast<unsigned char>(q)) {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + q;
}

void json_string(const std::string& s, std::string& out) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

void json_dump(const TemplateValue& v, std::optional<int> indent, int depth, std::string& out) {
  auto newline = [&](int level) {
    out += '\n';
    out.append(static_cast<size_t>(*indent * level), ' ');
  };
  switch (v.kind) {
    case Kind::None:
      out += "null";
      return;
    case Kind::Bool:
      out += v.boolean ? "true" : "false";
      return;
    case Kind::Int:
      out += std::to_string(v.integer);
      return;
    case Kind::Float:
      out += std::isnan(v.real)   ? "NaN"
             : std::isinf(v.real) ? (v.real > 0 ? "Infinity" : "-Infinity")
                                  : python_float(v.real);
      return;
    case Kind::String:
      json_string(v.text, out);
      return;
    case Kind::List:
      if (v.list->empty()) {
        out += "[]";
        return;
      }
      out += '[';
      for (size_t i = 0; i < v.list->size(); ++i) {
        if (i) out += indent ? "," : ", ";
        if (indent) newline(depth + 1);
        json_dump((*v.list)[i], indent, depth + 1, out);
      }
      if (indent) newline(depth);
      out += ']';
      return;
    case Kind::Dict:
      if (v.dict->empty()) {
        out += "{}";
        return;
      }
      out += '{';
      for (size_t i = 0; i < v.dict->size(); ++i) {
        if (i) out += indent ? "," : ", ";
        if (indent) newline(depth + 1);
        json_string((*v.dict)[i].first, out);
        out += ": ";
        json_dump((*v.dict)[i].second, indent, depth + 1, out);
      }
      if (indent) newline(depth);
      out += '}';
      return;
    default:
      throw ValueError("chat_template", str("tojson: ", type_name(v), " is not JSON serializable"));
  }
}

}  // namespace

std::string to_repr(const TemplateValue& v) {
  switch (v.kind) {
    case Kind::String:
      return repr_string(v.text);
    case Kind::List: {
      std::string out = "[";
      for (size_t i = 0; i < v.list->size(); ++i)
        out += (i ? ", " : "") + to_repr((*v.list)[i]);
      return out + "]";
    }
    case Kind::Dict: {
      std::string out = "{";
      for (size_t i = 0; i < v.dict->size(); ++i)
        out +=
            (i ? ", " : "") + repr_string((*v.dict)[i].first) + ": " + to_repr((*v.dict)[i].second);
      return out + "}";
    }
    default:
      return to_text(v);
  }
}

std::string to_text(const TemplateValue& v) {
  switch (v.kind) {
    case Kind::Undefined:
      return "";
    case Kind::None:
      return "None";
    case Kind::Bool:
      return v.boolean ? "True" : "False";
    case Kind::Int:
      return std::to_string(v.integer);
    case Kind::Float:
      return python_float(v.real);
    case Kind::String:
      return v.text;
    case Kind::Namespace:
      return "<Namespace>";
    case Kind::Function:
      return str("<function ", v.text, ">");
    default:
      return to_repr(v);
  }
}

std::string to_json_text(const TemplateValue& v, std::optional<int> indent) {
  std::string out;
  json_dump(v, indent, 0, out);
  return out;
}

std::string type_name(const TemplateValue& v) {
  switch (v.kind) {
    case Kind::Undefined:
      return "undefined";
    case Kind::None:
      return "none";
    case Kind::Bool:
      return "bool";
    case Kind::Int:
      return "int";
    case Kind::Float:
      return "float";
    case Kind::String:
      return "str";
    case Kind::List:
      return "list";
    case Kind::Dict:
      return "dict object";
    case Kind::Namespace:
      return "namespace";
    case Kind::Function:
      return "function";
  }
  return "value";
}

TemplateValue from_json(const nlohmann::ordered_json& j) {
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null:
      return TemplateValue::none();
    case nlohmann::ordered_json::value_t::boolean:
      return TemplateValue::of(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer:
      return TemplateValue::of(j.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned:
      return j.get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX)
                 ? TemplateValue::of(static_cast<int64_t>(j.get<uint64_t>()))
                 : TemplateValue::of(j.get<double>());
    case nlohmann::ordered_json::value_t::number_float:
      return TemplateValue::of(j.get<double>());
    case nlohmann::ordered_json::value_t::string:
      return TemplateValue::of(j.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      ValueList l;
      for (const auto& e : j)
        l.push_back(from_json(e));
      return TemplateValue::of(std::move(l));
    }
    case nlohmann::ordered_json::value_t::object: {
      ValueDict d;
      for (auto it = j.begin(); it != j.end(); ++it)
        d.emplace_back(it.key(), from_json(it.value()));
      return TemplateValue::of(std::move(d));
    }
    default:
      return TemplateValue::none();
  }
}

std::vector<std::string> code_points(const std::string& s) {
  std::vector<std::string> out;
  for (size_t i = 0; i < s.size();) {
    const DecodedChar c = decode_utf8(s, i);
    out.push_back(s.substr(i, c.len));
    i += c.len;
  }
  return out;
}

size_t code_point_count(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s)
    n += (c & 0xC0) != 0x80;
  return n;
}

}  // namespace zt::data
