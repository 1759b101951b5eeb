// The one table of DeepSpeed keys zerotrain recognises but does not support, and the one table of
// deprecated keys with their replacements (as DeepSpeed 0.19 maps them). Every other key is either
// read by a parse_*.cpp getter (supported: parsed, validated, printed) or unknown. Which parsed
// settings `zerotrain train` can run is a separate list, in train/ds_train_config.cpp.
// Tested by tests/config/test_ds_config_invalid.cpp and test_ds_config_deprecated.cpp.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace zt::config {

struct UnsupportedKey {
  std::string_view path;    // "sparse_attention", "zero_optimization.zenflow"
  std::string_view reason;  // ends the error message
};
std::span<const UnsupportedKey> unsupported_keys();
// The entry for `path`, or nullptr.
const UnsupportedKey* find_unsupported(std::string_view path);
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
