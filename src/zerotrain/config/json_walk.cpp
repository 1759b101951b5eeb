// Section's typed getters and the unknown-key check (see json_walk.h).
#include "zerotrain/config/json_walk.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "zerotrain/config/key_table.h"
#include "zerotrain/config/nearest_name.h"
#include "zerotrain/config/resolve_auto.h"
#include "zerotrain/core/error.h"
#include "zerotrain/core/json_util.h"

namespace zt::config {

void fail(std::string_view path, std::string_view message) {
  throw ValueError("config", str(path, ": ", message));
}

std::string join_path(std::string_view parent, std::string_view key) {
  return parent.empty() ? std::string(key) : str(parent, ".", key);
}

namespace {

std::string lower(std::string s) {
  for (char& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

void wrong_type(std::string_view path, std::string_view expected, const Json& v) {
  if (v.is_string() && v.get<std::string>() == "auto") {
    const std::string hint = auto_hint(path);
    fail(path, hint.empty() ? "\"auto\" is not accepted for this key (zerotrain resolves \"auto\" "
                              "only where Hugging Face does)"
                            : str("\"auto\" is not resolved; ", hint));
  }
  fail(path, str("expected ", expected, ", got ", describe_json(v)));
}

Section::Section(const Json& object, std::string path) : object_(&object), path_(std::move(path)) {
  if (!object.is_object()) wrong_type(path_.empty() ? "(top level)" : path_, "an object", object);
}

bool Section::has(std::string_view key) const {
  const auto it = object_->find(key);
  return it != object_->end() && !it->is_null();
}

const Json* Section::lookup(std::string_view key) {
  if (std::find(known_.begin(), known_.end(), key) == known_.end()) known_.emplace_back(key);
  const auto it = object_->find(key);
  if (it == object_->end() || it->is_null()) return nullptr;
  return &*it;
}

const Json* Section::get_raw(std::string_view key) {
  return lookup(key);
}

std::optional<bool> Section::get_opt_bool(std::string_view key) {
  const Json* v = lookup(key);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) wrong_type(path_of(key), "true or false", *v);
  return v->get<bool>();
}

bool Section::get_bool(std::string_view key, bool def) {
  return get_opt_bool(key).value_or(def);
}

std::optional<int64_t> Section::get_opt_int(std::string_view key, int64_t min) {
  const Json* v = lookup(key);
  if (!v) return std::nullopt;
  int64_t n = 0;
  if (v->is_number_unsigned()) {
    if (v->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      wrong_type(path_of(key), "an integer that fits in 64 bits", *v);
    n = static_cast<int64_t>(v->get<uint64_t>());
  } else if (v->is_number_integer()) {
    n = v->get<int64_t>();
  } else if (v->is_number_float()) {
    const double d = v->get<double>();
    // 2^63 is the first double outside int64.
    if (std::trunc(d) != d || std::fabs(d) >= 9.2233720368547758e18)
      wrong_type(path_of(key), "an integer", *v);
    n = static_cast<int64_t>(d);
  } else {
    wrong_type(path_of(key), "an integer", *v);
  }
  if (n < min) fail(path_of(key), str("must be >= ", min, ", got ", n));
  return n;
}

int64_t Section::get_int(std::string_view key, int64_t def, int64_t min) {
  return get_opt_int(key, min).value_or(def);
}

std::optional<double> Section::get_opt_double(std::string_view key) {
  const Json* v = lookup(key);
  if (!v) return std::nullopt;
  if (!v->is_number()) wrong_type(path_of(key), "a number", *v);
  return v->get<double>();
}

double Section::get_double(std::string_view key, double def, double min, double max) {
  const double d = get_opt_double(key).value_or(def);
  if (!std::isfinite(d) || d < min || d > max)
    fail(path_of(key), std::isinf(max) ? str("must be >= ", min, ", got ", d)
                                       : str("must be in [", min, ", ", max, "], got ", d));
  return d;
}

std::optional<std::string> Section::get_opt_string(std::string_view key) {
  const Json* v = lookup(key);
  if (!v) return std::nullopt;
  if (!v->is_string()) wrong_type(path_of(key), "a string", *v);
  return v->get<std::string>();
}

std::string Section::get_string(std::string_view key, const std::string& def) {
  return get_opt_string(key).value_or(def);
}

std::vector<std::string> Section::get_string_list(std::string_view key) {
  const Json* v = lookup(key);
  if (!v) return {};
  if (!v->is_array()) wrong_type(path_of(key), "an array of strings", *v);
  std::vector<std::string> out;
  for (const Json& e : *v) {
    if (!e.is_string()) wrong_type(path_of(key), "an array of strings", *v);
    out.push_back(e.get<std::string>());
  }
  return out;
}

std::optional<size_t> Section::get_opt_choice(std::string_view key,
                                              const std::vector<std::string>& choices,
                                              bool ignore_case) {
  const Json* v = lookup(key);
  if (!v) return std::nullopt;
  std::string expected = "one of";
  for (size_t i = 0; i < choices.size(); ++i)
    expected += str(i ? ", \"" : " \"", choices[i], "\"");
  if (!v->is_string()) wrong_type(path_of(key), expected, *v);
  const std::string s = v->get<std::string>();
  for (size_t i = 0; i < choices.size(); ++i)
    if (s == choices[i] || (ignore_case && lower(s) == lower(choices[i]))) return i;
  wrong_type(path_of(key), expected, *v);
}

size_t Section::get_choice(std::string_view key, const std::vector<std::string>& choices,
                           size_t def, bool ignore_case) {
  return get_opt_choice(key, choices, ignore_case).value_or(def);
}

std::optional<Section> Section::get_section(std::string_view key) {
  const Json* v = lookup(key);
  if (!v) return std::nullopt;
  return Section(*v, path_of(key));
}

std::string Section::pick_alias(std::string_view name, std::string_view alias) {
  const bool has_name = has(name), has_alias = has(alias);
  lookup(name);
  lookup(alias);
  if (has_name && has_alias)
    fail(path_of(name), str("given twice, also as \"", alias, "\" (DeepSpeed's two spellings of ",
                            "one setting); keep one"));
  return std::string(has_alias ? alias : name);
}

void Section::finish() const {
  for (const auto& [key, value] : object_->items()) {
    if (std::find(known_.begin(), known_.end(), key) != known_.end()) continue;
    const std::string path = path_of(key);
    if (const UnsupportedKey* u = find_unsupported(path)) fail(path, u->reason);
    std::vector<std::string> candidates = known_;
    for (std::string& n : unsupported_names_under(path_))
      candidates.push_back(std::move(n));
    const std::optional<std::string> near = nearest_name(key, candidates);
    fail(path, near ? str("unknown key; did you mean \"", *near, "\"?") : "unknown key");
  }
}

}  // namespace zt::config
