// Typed access to the keys of a config.json object, for the families' readers
// (nn/family_<name>.cpp) and io/hf_config_read.cpp; errors name the source and the full key. Tested
// through tests/io/test_hf_config.cpp.
#pragma once

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "zerotrain/core/io_error.h"
#include "zerotrain/core/json_util.h"
#include "zerotrain/nn/model_config.h"

namespace zt::nn {

inline constexpr std::string_view kHfConfigComponent = "hf_config";

// Typed access to the keys of one JSON object; errors name the source and the full key.
class HfConfigFields {
 public:
  HfConfigFields(const nlohmann::json& obj, std::string source, std::string prefix = "")
      : obj_(obj), source_(std::move(source)), prefix_(std::move(prefix)) {}

  // Present and not null.
  bool has(const char* key) const { return obj_.contains(key) && !obj_[key].is_null(); }
  bool present(const char* key) const { return obj_.contains(key); }
  const nlohmann::json& at(const char* key) const { return obj_.at(key); }
  std::string key_name(const char* key) const { return prefix_ + key; }
  HfConfigFields sub(const char* key) const {
    if (!at(key).is_object()) bad_type(key, "an object");
    return HfConfigFields(at(key), source_, key_name(key) + ".");
  }

  int64_t req_int(const char* key) const {
    require(key);
    return as_int(key);
  }
  int64_t opt_int(const char* key, int64_t def) const { return has(key) ? as_int(key) : def; }
  double req_num(const char* key) const {
    require(key);
    return as_num(key);
  }
  double opt_num(const char* key, double def) const { return has(key) ? as_num(key) : def; }
  bool opt_bool(const char* key, bool def) const {
    if (!has(key)) return def;
    if (!at(key).is_boolean()) bad_type(key, "true or false");
    return at(key).get<bool>();
  }
  std::string req_str(const char* key) const {
    require(key);
    return as_str(key);
  }
  std::string opt_str(const char* key, const std::string& def) const {
    return has(key) ? as_str(key) : def;
  }

  [[noreturn]] void bad_type(const char* key, const char* expected) const {
    throw FormatError(kHfConfigComponent, str(source_, ": ", key_name(key), ": expected ", expected,
                                              ", got ", describe_json(at(key))));
  }
  [[noreturn]] void unsupported(const char* key, const std::string& what) const {
    throw ValueError(kHfConfigComponent, str(source_, ": ", key_name(key), ": ", what));
  }
  const std::string& source() const { return source_; }

 private:
  void require(const char* key) const {
    if (!obj_.contains(key))
      throw FormatError(kHfConfigComponent,
                        str(source_, ": missing required key \"", key_name(key), "\""));
    if (obj_[key].is_null())
      throw FormatError(kHfConfigComponent, str(source_, ": ", key_name(key), " must not be null"));
  }
  int64_t as_int(const char* key) const {
    const nlohmann::json& v = at(key);
    if (v.is_number_integer() && !v.is_number_unsigned()) return v.get<int64_t>();
    if (v.is_number_unsigned() &&
        v.get<uint64_t>() <= uint64_t(std::numeric_limits<int64_t>::max()))
      return static_cast<int64_t>(v.get<uint64_t>());
    bad_type(key, "an integer");
  }
  double as_num(const char* key) const {
    if (!at(key).is_number()) bad_type(key, "a number");
    return at(key).get<double>();
  }
  std::string as_str(const char* key) const {
    if (!at(key).is_string()) bad_type(key, "a string");
    return at(key).get<std::string>();
  }

  const nlohmann::json& obj_;
  std::string source_;
  std::string prefix_;
};

// bos_token_id and eos_token_id into c: an integer, a list (the first is kept) or null (-1); the
// family's defaults when omitted.
void read_token_ids(const HfConfigFields& f, ModelConfig& c, int64_t bos, int64_t eos);

}  // namespace zt::nn
