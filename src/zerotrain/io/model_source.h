// What a run starts from, decided once from the --model path and --init: the weights of a model
// directory (named), or a seeded random init the user asked for (`--init random`, or a path that
// is a config.json), never a silent fallback. A directory without loadable weights is an error
// that names what it holds instead: a dangling model.safetensors symlink (a pruned Hugging Face
// cache snapshot), PyTorch's pytorch_model.bin, shards without their index, a misspelled
// model.safetensor, ... A fine-tuning run must not quietly become pre-training.
// Tested by tests/io/test_model_source.cpp.
#pragma once

#include <filesystem>
#include <string>

namespace zt::io {

enum class ModelInit {
  from_path,   // a directory's weights; a config.json file: random init (the default)
  pretrained,  // a directory's weights; a config.json file is an error
  random,      // a seeded random init from the config, even when the directory has weights
};

// "pretrained" / "random"; ValueError naming the flag otherwise.
ModelInit parse_model_init(const std::string& name);

struct ModelSource {
  std::filesystem::path config;   // the config.json
  std::filesystem::path weights;  // the directory whose weights load; empty: random init
  std::string description;        // "the weights of DIR/model.safetensors", "a random init ..."
};

// `path`: a model directory or a config.json. Errors: ValueError("[model] ...") naming the path
// and, for a directory without loadable weights, what was found and how to ask for a random init.
ModelSource resolve_model_source(const std::filesystem::path& path, ModelInit init);

// The config.json of `path` (a directory or the file itself), without looking for weights.
std::filesystem::path model_config_file(const std::filesystem::path& path);

}  // namespace zt::io
