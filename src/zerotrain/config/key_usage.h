// `zerotrain config check --explain`: per key of a ds_config, how zerotrain uses it. One table
// (key_usage.cpp; zero_optimization's rows are zero_key_table.h's) says, for every key DeepSpeed
// 0.19.6 accepts and zerotrain parses, whether `zerotrain train` runs it (and onto what), refuses
// it for now, or parses it and reads it nowhere (and why that changes nothing or what differs);
// unsupported, outdated, misplaced and unknown keys are explained from key_table.h. A key read
// nowhere whose value changes what DeepSpeed does is warned about when the file sets it
// (unread_setting_warnings). Tested by tests/config/test_key_usage.cpp (every key `config check`
// prints has a row).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zerotrain/config/ds_config.h"

namespace zt::config {

// How zerotrain uses the key at `path` ("zero_optimization.offload_param.device"; the stage-3
// keys under either spelling), or nullopt when the table has no row for it.
std::optional<std::string> key_usage(std::string_view path);

// "[config] KEY: VALUE changes what DeepSpeed does, but zerotrain reads it nowhere: ..." for each
// setting of `config` that differs from DeepSpeed's default where the table marks that a
// different value changes DeepSpeed's numbers or outputs (prescale_gradients, ZeRO++
// quantization, ...). load_ds_config adds these to its warnings.
std::vector<std::string> unread_setting_warnings(const DsConfig& config);

// One line per key of `file` (the ds_config as written, after a successful load), sorted by key
// within each section: "path = value: how". `resolved` (ds_config_json's output,
// parsed) supplies what an "auto" resolved to.
std::string explain_config(const nlohmann::json& file, const nlohmann::json& resolved);

}  // namespace zt::config
