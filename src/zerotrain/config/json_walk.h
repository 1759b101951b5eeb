// Reading one JSON object of a ds_config with typed getters that track the key path: each getter
// names "section.key" in its error (wrong type, out-of-range number, bad enum value, an "auto"
// left unresolved), and records the key as known. finish() then rejects every key no getter
// asked for: as unsupported when the key table lists it, otherwise as unknown with the nearest
// known name. A JSON null reads as an absent key (DeepSpeed's default). DeepSpeed 0.19.6 differs
// from this strictness in two ways that a Section follows, each with a warning naming the key: an
// unknown key at the top level is ignored, and a section DeepSpeed validates as a pydantic model
// in lax mode (lax_coercion.h: fp16, bf16, zero_optimization, ...) converts "true", "5e-5" and
// the like. Internal
// to config/. Tested through tests/config/test_ds_config_corpus.cpp and test_lax_coercion.cpp.
#pragma once

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zt::config {

using Json = nlohmann::json;

struct UnsupportedKey;  // key_table.h

// ValueError "[config] <path>: <message>".
[[noreturn]] void fail(std::string_view path, std::string_view message);
// "<path>: expected <expected>, got <value>"; for an "auto" left unresolved, what would resolve it.
[[noreturn]] void wrong_type(std::string_view path, std::string_view expected, const Json& value);
// "a.b" from "a" and "b"; "b" when `parent` is empty.
std::string join_path(std::string_view parent, std::string_view key);

class Section {
 public:
  // `object` must outlive the Section; `path` is "" for the top level. `warnings` (one line
  // each, "[config] ...") receives what is ignored or converted; without it (nullptr) nothing
  // is: an unknown top-level key is an error too.
  Section(const Json& object, std::string path, std::vector<std::string>* warnings = nullptr);

  const std::string& path() const { return path_; }
  std::string path_of(std::string_view key) const { return join_path(path_, key); }
  bool has(std::string_view key) const;  // present and not null

  bool get_bool(std::string_view key, bool def);
  std::optional<bool> get_opt_bool(std::string_view key);
  // An integer, or a number with no fraction (DeepSpeed files write 5e8); at least `min`.
  int64_t get_int(std::string_view key, int64_t def,
                  int64_t min = std::numeric_limits<int64_t>::min());
  std::optional<int64_t> get_opt_int(std::string_view key,
                                     int64_t min = std::numeric_limits<int64_t>::min());
  double get_double(std::string_view key, double def,
                    double min = -std::numeric_limits<double>::infinity(),
                    double max = std::numeric_limits<double>::infinity());
  std::optional<double> get_opt_double(std::string_view key);
  std::string get_string(std::string_view key, const std::string& def);
  std::optional<std::string> get_opt_string(std::string_view key);
  std::vector<std::string> get_string_list(std::string_view key);
  // The index of the value among `choices` (compared ignoring case when `ignore_case`).
  std::optional<size_t> get_opt_choice(std::string_view key,
                                       const std::vector<std::string>& choices, bool ignore_case);
  size_t get_choice(std::string_view key, const std::vector<std::string>& choices, size_t def,
                    bool ignore_case);
  // A nested object (absent or null: nullopt). Its getters accept lax_coercion.h's conversions,
  // with a warning, when this Section has a warnings sink and the object is one DeepSpeed
  // validates as a pydantic model (validated_leniently) or lies inside one.
  std::optional<Section> get_section(std::string_view key);
  // The raw value without marking the key known (absent or null: nullptr).
  const Json* peek(std::string_view key) const;
  // The raw value (absent or null: nullptr), marked known.
  const Json* get_raw(std::string_view key);

  // DeepSpeed accepts some zero_optimization keys under two names (`stage3_prefetch_bucket_size`
  // and `prefetch_bucket_size`): marks both known and returns the one present (`name` when
  // neither is); both present is an error.
  std::string pick_alias(std::string_view name, std::string_view alias);

  // Throws for the first key no getter asked for (see the header comment).
  void finish() const;
  // Throws for the first key of the unsupported table whose value asks for the feature: called
  // before the sections are read, so that a refused file names the missing feature first.
  void refuse_unsupported() const;

 private:
  const Json* lookup(std::string_view key);
  // Records that `value` at `key` was read as `result` (lax_coercion.h).
  void note_conversion(std::string_view key, const Json& value, const std::string& result);
  // A key no getter asked for: a warning when DeepSpeed 0.19.6 ignores it and zerotrain follows,
  // otherwise an error (see the header comment).
  void unread_key(const std::string& key, const Json& value) const;
  // For a key of the unsupported table: why its value leaves the feature off (for a warning),
  // or a throw naming the feature.
  std::string inert_or_fail(const std::string& path, const UnsupportedKey& u,
                            const Json& value) const;

  const Json* object_;
  std::string path_;
  std::vector<std::string> known_;
  std::vector<std::string>* warnings_ = nullptr;
  bool lax_ = false;
};

}  // namespace zt::config
