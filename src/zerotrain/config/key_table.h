// The one table of DeepSpeed keys zerotrain recognises but does not support (with the values that
// leave the feature off, which are accepted with a warning), the one table of deprecated keys with
// their replacements (as DeepSpeed 0.19 maps them), and two short tables of keys users meet in
// real files: keys of older DeepSpeed schemas that 0.19.6 refuses too, and top-level keys that
// belong in a section. Every other key is either read by a parse_*.cpp getter (supported:
// parsed, validated, printed) or unknown. Which parsed settings `zerotrain train` can run is a
// separate list, in train/ds_train_config.cpp. Tested by tests/config/test_ds_config_corpus.cpp,
// test_ds_config_deprecated.cpp and test_ds_config_real.cpp.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace zt::config {

// The values of an unsupported key with which DeepSpeed runs without the feature.
enum class Inert {
  never,                    // any value asks for the feature
  enabled_false,            // a section with "enabled": false
  every_technique_off,      // compression_training: no technique enabled
  size_one,                 // the number 1 (sequence_parallel_size)
  no_sequence_parallelism,  // any value while sequence_parallel_size is absent or 1
};
struct UnsupportedKey {
  std::string_view path;    // "sparse_attention", "zero_optimization.zenflow"
  std::string_view reason;  // ends the error message
  Inert inert = Inert::never;
};
std::span<const UnsupportedKey> unsupported_keys();
// The entry for `path`, or nullptr.
const UnsupportedKey* find_unsupported(std::string_view path);
// Why `value` (the key's value in the object `parent`) leaves the feature off, for a warning; or
// nullopt when it asks for the feature.
std::optional<std::string> inert_reason(const UnsupportedKey& key, const nlohmann::json& value,
                                        const nlohmann::json& parent);

// A key of an older DeepSpeed schema that DeepSpeed 0.19.6 refuses too ("bf16.hysteresis").
struct OutdatedKey {
  std::string_view path;
  std::string_view reason;  // ends the error message, saying since which version
};
const OutdatedKey* find_outdated(std::string_view path);

// A top-level key that belongs in a section ("offload_optimizer" in zero_optimization).
// DeepSpeed ignores it silently; zerotrain ignores it too, with a warning that says so.
struct MisplacedKey {
  std::string_view path;
  std::string_view section;
};
const MisplacedKey* find_misplaced(std::string_view path);
// The last path components of the unsupported keys directly under `section` ("" = top level).
std::vector<std::string> unsupported_names_under(std::string_view section);

enum class DeprecationKind {
  rename,        // the value moves to `replacement` unchanged
  offload_flag,  // true becomes {"device": "cpu"} under `replacement`; false is dropped
  no_effect,     // dropped with a warning (DeepSpeed sets nothing)
};
struct DeprecatedKey {
  std::string_view section;            // "" = top level
  std::string_view key;                // "cpu_offload"
  std::string_view replacement;        // "offload_optimizer"
  std::string_view replacement_alias;  // the replacement's other spelling, or ""
  DeprecationKind kind;
};
std::span<const DeprecatedKey> deprecated_keys();

}  // namespace zt::config
