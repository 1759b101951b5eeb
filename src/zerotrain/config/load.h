// Loading a DeepSpeed ds_config.json: parse (repeated keys refused) -> map deprecated keys
// (deprecations.h) -> resolve "auto" from command-line values (resolve_auto.h) -> read every
// section into typed structures (ds_config.h), rejecting unknown and unsupported keys ->
// DeepSpeed's batch rule (batch_rule.h) -> cross-section checks. Errors are ValueError (or
// io FormatError for bad JSON), one line, "[config] <key path>: <what is wrong>". Warnings
// (deprecated keys, ignored values) are returned for the caller to print.
// Tested by tests/config/ (the corpus in tests/fixtures/ds_configs/).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "zerotrain/config/ds_config.h"
#include "zerotrain/config/overrides.h"

namespace zt::config {

struct LoadedConfig {
  DsConfig config;
  std::vector<std::string> warnings;  // one line each, "[config] ..."
};

LoadedConfig load_ds_config(const std::filesystem::path& path,
                            const ConfigOverrides& overrides = {});
// `source` names the text in errors.
LoadedConfig parse_ds_config(std::string_view text, const std::string& source,
                             const ConfigOverrides& overrides = {});

// The resolved configuration as DeepSpeed JSON: every key with its value, defaults included,
// the stage-3 keys under their stage3_ names (indented by 2).
std::string ds_config_json(const DsConfig& config);

}  // namespace zt::config
