// The conversions of DeepSpeed 0.19.6's config sections that are pydantic models in lax mode
// (fp16 and bf16 since 0.17.1, zero_optimization with its offload sections, the monitors,
// comms_logger; validated_leniently): a bool
// from "true"/"false" and the other spellings pydantic accepts, or from 0 and 1; an integer from a
// string of digits ("500000000", "5.0") or a bool; a number from a numeric string ("1e-5") or a
// bool. Every other mismatch stays an error, as in pydantic. Only Section (json_walk.h) applies
// them, in the sections DeepSpeed validates this way, and warns naming the key. Internal to
// config/; tested by tests/config/test_lax_coercion.cpp.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

namespace zt::config {

// Whether DeepSpeed 0.19.6 validates the top-level section `key` as a pydantic model (lax mode,
// and "auto" dropped for the field's default: DeepSpeedConfigModel in config_utils.py).
bool validated_leniently(std::string_view key);

// nullopt when pydantic's lax mode refuses the value too. A value of the target JSON type
// itself is no conversion and also gives nullopt: callers try these only after a type mismatch.
std::optional<bool> lax_bool(const nlohmann::json& v);
std::optional<int64_t> lax_int(const nlohmann::json& v);
std::optional<double> lax_double(const nlohmann::json& v);

}  // namespace zt::config
