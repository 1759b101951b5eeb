// Deprecated ds_config keys (key_table.h) mapped onto their replacements as DeepSpeed 0.19 maps
// them, with a warning each; a deprecated key given together with its replacement is an error.
// Also the legacy `"zero_optimization": true|false` form (stage 1 or 0, with the top-level
// `allgather_size`). Tested by tests/config/test_ds_config_deprecated.cpp.
#pragma once

#include <string>
#include <vector>

#include "zerotrain/config/json_walk.h"

namespace zt::config {

// Rewrites `root` (an object) in place; appends one line per mapped key to `warnings`.
void apply_deprecations(Json& root, std::vector<std::string>& warnings);

}  // namespace zt::config
