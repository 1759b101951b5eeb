// Hugging Face config.json <-> nn::ModelConfig for model_type llama, mistral, qwen2 and gpt2.
// Reads both the transformers 4 spelling (rope_theta, rope_scaling, torch_dtype) and the
// transformers 5 one (rope_parameters, dtype); keys a config may omit take transformers' defaults
// for that model_type, the sizes are required. Errors name the file and the key: FormatError for
// a missing key or a value of the wrong JSON type, ValueError for a value zerotrain does not
// support (model_type, rope type, activation, per-layer sliding windows), an inconsistent shape or
// a size past its ceiling (nn/model_size.h, named by its config.json key: "num_hidden_layers").
// Tested by tests/io/test_hf_config.cpp (published configs in tests/fixtures/configs/) and
// tests/io/test_hf_config_transformers.cpp (transformers.AutoConfig reads back what is written).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "zerotrain/core/dtype.h"
#include "zerotrain/nn/model_config.h"

namespace zt::io {

// `path`: a config.json, or a directory holding one.
nn::ModelConfig read_hf_config(const std::filesystem::path& path);
// `source` names the text in errors.
nn::ModelConfig parse_hf_config(std::string_view json_text,
                                const std::string& source = "config.json");

// The config.json transformers writes for this model (keys sorted, indented by 2): architectures,
// model_type and every field, torch_dtype from config.torch_dtype. A config the model_type cannot
// express (a llama with a sliding window, a gpt2 with grouped-query attention, ...) is a
// ValueError naming the field.
std::string hf_config_json(const nn::ModelConfig& config);
// Writes hf_config_json atomically to `path` (a file name, or an existing directory).
void write_hf_config(const nn::ModelConfig& config, const std::filesystem::path& path);

// The fields in which two configs differ ("num_kv_heads", ...), for messages and tests.
std::vector<std::string> config_differences(const nn::ModelConfig& a, const nn::ModelConfig& b);

// The config.json key of a ModelConfig size field (nn/model_size.h names fields): "num_layers" is
// "num_hidden_layers" for llama and "n_layer" for gpt2.
const char* hf_config_key(nn::Family family, std::string_view field);

std::string hf_model_type(nn::Family family);    // "llama"
std::string hf_architecture(nn::Family family);  // "LlamaForCausalLM"
std::string hf_torch_dtype(DType dtype);         // "bfloat16"

}  // namespace zt::io
