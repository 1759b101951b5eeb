// resolve_model_source: weights, an explicit random init, or an error naming what the directory
// holds (see model_source.h).
#include "zerotrain/io/model_source.h"

#include <algorithm>
#include <system_error>
#include <vector>

#include "zerotrain/core/error.h"
#include "zerotrain/core/json_util.h"
#include "zerotrain/io/sharded_safetensors.h"

namespace zt::io {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kComponent = "model";
constexpr size_t kListedAtMost = 6;

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A shard file name as transformers writes them: model-00001-of-00003.safetensors.
bool is_shard_name(const std::string& name) {
  return name.rfind("model-", 0) == 0 && ends_with(name, ".safetensors") &&
         name.find("-of-") != std::string::npos;
}

// Why `name` in the directory is not weights zerotrain loads, or "" when it is not a weights
// file at all (config.json, tokenizer files, README.md, ...).
std::string why_not_loaded(const fs::directory_entry& entry, bool has_index) {
  const std::string name = entry.path().filename().string();
  std::error_code ec;
  const bool symlink = entry.is_symlink(ec);
  const bool target_exists = fs::exists(entry.path(), ec);
  const bool weights_like =
      name == kWeightsFile || name == kWeightsIndexFile ||
      name.find("safetensor") != std::string::npos || ends_with(name, ".bin") ||
      ends_with(name, ".pt") || ends_with(name, ".pth") || ends_with(name, ".ckpt") ||
      ends_with(name, ".h5") || ends_with(name, ".msgpack") || ends_with(name, ".gguf");
  if (!weights_like) return "";
  const std::string quoted = quote_excerpt(name);
  if (symlink && !target_exists)
    return str(quoted, ", a dangling symlink (to ",
               quote_excerpt(fs::read_symlink(entry.path(), ec).string(), 60), ")");
  if (name == kWeightsFile || name == kWeightsIndexFile) return str(quoted, ", not a regular file");
  if (is_shard_name(name) && !has_index)
    return str(quoted, ", a shard without ", kWeightsIndexFile);
  if (is_shard_name(name)) return "";  // listed by the index, which is itself unreadable
  if (ends_with(name, ".bin") || ends_with(name, ".pt") || ends_with(name, ".pth"))
    return str(quoted, ", PyTorch weights (zerotrain reads safetensors only)");
  if (name.find("safetensor") != std::string::npos)
    return str(quoted, ", not named ", kWeightsFile);
  return str(quoted, ", a format zerotrain does not read");
}

// "found: A; B; ..." for the weight-like files of `dir`, or "it holds no weight files".
std::string what_is_there(const fs::path& dir) {
  std::vector<std::string> found;
  std::error_code ec;
  const bool has_index = fs::exists(fs::symlink_status(dir / kWeightsIndexFile, ec));
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string why = why_not_loaded(e, has_index);
    if (!why.empty()) found.push_back(why);
  }
  if (found.empty()) return "it holds no weight files";
  std::sort(found.begin(), found.end());
  std::string out = "found ";
  for (size_t i = 0; i < found.size() && i < kListedAtMost; ++i)
    out += (i ? "; " : "") + found[i];
  if (found.size() > kListedAtMost) out += str("; and ", found.size() - kListedAtMost, " more");
  return out;
}

bool loadable(const fs::path& dir) {
  return fs::is_regular_file(dir / kWeightsFile) || fs::is_regular_file(dir / kWeightsIndexFile);
}

}  // namespace

ModelInit parse_model_init(const std::string& name) {
  if (name == "pretrained") return ModelInit::pretrained;
  if (name == "random") return ModelInit::random;
  throw ValueError(kComponent,
                   str("--init: expected pretrained or random, got ", quote_excerpt(name)));
}

fs::path model_config_file(const fs::path& path) {
  const fs::path config = fs::is_directory(path) ? path / "config.json" : path;
  if (!fs::is_regular_file(config))
    throw ValueError(kComponent, str("no model config at ", config.string(),
                                     " (give a Hugging Face model directory or a config.json)"));
  return config;
}

ModelSource resolve_model_source(const fs::path& path, ModelInit init) {
  ModelSource s;
  s.config = model_config_file(path);
  const bool directory = fs::is_directory(path);
  if (init == ModelInit::random) {
    s.description =
        directory && loadable(path)
            ? str("a random init (--init random: the weights in ", path.string(), " are not read)")
            : "a random init (--init random)";
    return s;
  }
  if (!directory) {
    if (init == ModelInit::pretrained)
      throw ValueError(kComponent, str("--init pretrained: ", path.string(),
                                       " is a config file, which holds no weights (give the "
                                       "model directory)"));
    s.description = str("a random init (", path.string(), " is a config file)");
    return s;
  }
  if (!loadable(path))
    throw ValueError(kComponent, str(path.string(), ": no loadable weights (", kWeightsFile, " or ",
                                     kWeightsIndexFile, "); ", what_is_there(path),
                                     ". For a random init from its config give --init random or ",
                                     (path / "config.json").string()));
  s.weights = path;
  s.description =
      str("the weights of ",
          (path / (fs::is_regular_file(path / kWeightsFile) ? kWeightsFile : kWeightsIndexFile))
              .string());
  return s;
}

}  // namespace zt::io
