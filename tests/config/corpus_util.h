// Helpers of the ds_config corpus tests: the files of tests/fixtures/ds_configs/{valid,invalid}/
// with their *.expect.json sidecars, and the sidecar's "overrides" as ConfigOverrides (every value
// given explicitly, as `zerotrain config check` flags are).
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "zerotrain/config/overrides.h"

namespace zt::test {

// The *.json files (not the sidecars) of tests/fixtures/ds_configs/<kind>, sorted.
std::vector<std::filesystem::path> ds_corpus(const std::string& kind);
// The sidecar of `config` (name.json -> name.expect.json), parsed.
nlohmann::json ds_expectation(const std::filesystem::path& config);
config::ConfigOverrides overrides_from_json(const nlohmann::json& j);
// The value at a dotted path ("zero_optimization.offload_param.device") or nullptr.
const nlohmann::json* json_at(const nlohmann::json& root, const std::string& path);

}  // namespace zt::test
