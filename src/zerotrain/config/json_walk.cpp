// Section's typed getters and the unknown-key check (see json_walk.h).
#include "zerotrain/config/json_walk.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "zerotrain/config/key_table.h"
#include "zerotrain/config/lax_coercion.h"
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

Section::Section(const Json& object, std::string path, std::vector<std::string>* warnings)
    : object_(&object), path_(std::move(path)), warnings_(warnings) {
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

const Json* Section::peek(std::string_view key) const {
  const auto it = object_->find(key);
  return it == object_->end() || it->is_null() ? nullptr : &*it;
}

const Json* Section::get_raw(std::string_view key) {
  return lookup(key);
}

void Section::note_conversion(std::string_view key, const Json& value, const std::string& result) {
  warnings_->push_back(str("[config] ", path_of(key), ": ", describe_json(value), " read as ",
                           result, ", as DeepSpeed's lax validation converts it; write ", result));
}

std::optional<bool> Section::get_opt_bool(std::string_view key) {
  const Json* v = lookup(key);
  if (!v) return std::nullopt;
  if (v->is_boolean()) return v->get<bool>();
  const std::optional<bool> b = lax_ ? lax_bool(*v) : std::nullopt;
  if (!b) wrong_type(path_of(key), "true or false", *v);
  note_conversion(key, *v, *b ? "true" : "false");
  return *b;
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
  } else if (const std::optional<int64_t> lax = lax_ ? lax_int(*v) : std::nullopt) {
    n = *lax;
    note_conversion(key, *v, std::to_string(n));
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
  if (v->is_number()) return v->get<double>();
  const std::optional<double> d = lax_ ? lax_double(*v) : std::nullopt;
  if (!d) wrong_type(path_of(key), "a number", *v);
  note_conversion(key, *v, Json(*d).dump());
  return *d;
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
  Section s(*v, path_of(key), warnings_);
  s.lax_ = warnings_ && (lax_ || (path_.empty() && validated_leniently(key)));
  return s;
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
  for (const auto& [key, value] : object_->items())
    if (std::find(known_.begin(), known_.end(), key) == known_.end()) unread_key(key, value);
}

void Section::refuse_unsupported() const {
  for (const auto& [key, value] : object_->items())
    if (const UnsupportedKey* u = find_unsupported(path_of(key)))
      if (std::find(known_.begin(), known_.end(), key) == known_.end())
        inert_or_fail(path_of(key), *u, value);
}

std::string Section::inert_or_fail(const std::string& path, const UnsupportedKey& u,
                                   const Json& value) const {
  // An older schema inside an unsupported section is the first thing to fix.
  if (value.is_object())
    for (const auto& [inner, inner_value] : value.items())
      if (const OutdatedKey* o = find_outdated(join_path(path, inner)))
        fail(join_path(path, inner), o->reason);
  if (auto why = warnings_ ? inert_reason(u, value, *object_) : std::nullopt) return *why;
  fail(path, u.reason);
}

namespace {

// A key as messages show it: as written when it is a plain name, else a short escaped excerpt,
// so a hostile file cannot send raw bytes (escape sequences, megabytes) to the terminal.
std::string shown_key(const std::string& key) {
  const bool plain = !key.empty() && key.size() <= 64 &&
                     std::all_of(key.begin(), key.end(), [](unsigned char c) {
                       return std::isalnum(c) || c == '_' || c == '-' || c == '.';
                     });
  return plain ? key : quote_excerpt(key);
}

}  // namespace

void Section::unread_key(const std::string& key, const Json& value) const {
  const std::string path = path_of(shown_key(key));
  if (const OutdatedKey* o = find_outdated(path)) fail(path, o->reason);
  if (const UnsupportedKey* u = find_unsupported(path)) {
    const std::string why = inert_or_fail(path, *u, value);
    warnings_->push_back(str("[config] ", path, ": ", why));
    return;
  }
  const bool top_level = path_.empty() && warnings_;
  if (const MisplacedKey* m = top_level ? find_misplaced(path) : nullptr) {
    warnings_->push_back(str("[config] ", path, ": ignored at the top level; it belongs in ",
                             m->section, " (DeepSpeed ignores it silently: nothing is set by it; ",
                             "zerotrain warns, which is where it differs)"));
    return;
  }
  std::vector<std::string> candidates = known_;
  for (std::string& n : unsupported_names_under(path_))
    candidates.push_back(std::move(n));
  const std::optional<std::string> near = nearest_name(key, candidates);
  const std::string did_you_mean = near ? str("; did you mean \"", *near, "\"?") : "";
  // DeepSpeed reads the top level key by key and never looks at the others.
  if (top_level) {
    warnings_->push_back(str("[config] ", path, ": unknown key, ignored as DeepSpeed ignores ",
                             "unknown top-level keys", did_you_mean));
    return;
  }
  fail(path, str("unknown key", did_you_mean));
}

}  // namespace zt::config
