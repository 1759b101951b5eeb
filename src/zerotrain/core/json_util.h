// Small helpers for reading JSON files (safetensors headers, shard indexes, config.json, ds_config)
// with nlohmann::json: parsing that names the file, and short descriptions of bad values for error
// messages. Included by .cpp files only (the public headers of io/ do not expose nlohmann).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace zt {

// Parses `text`; a syntax error or a repeated key in any object is a FormatError naming `source`.
nlohmann::json parse_json(std::string_view text, std::string_view component,
                          const std::string& source);

// "a string \"4096\"", "an integer 7", "null", ... (values longer than 40 characters are cut).
std::string describe_json(const nlohmann::json& v);

}  // namespace zt
