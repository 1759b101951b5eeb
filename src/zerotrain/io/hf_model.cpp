// load_pretrained / save_pretrained over a Parameter list (see hf_model.h).
#include "zerotrain/io/hf_model.h"

#include <algorithm>
#include <set>

#include "zerotrain/core/files.h"
#include "zerotrain/core/io_error.h"
#include "zerotrain/core/json_util.h"
#include "zerotrain/io/hf_config.h"
#include "zerotrain/nn/family_registry.h"

namespace zt::io {

namespace {
constexpr std::string_view kComponent = "hf_model";
constexpr const char* kHead = "lm_head.weight";

// transformers' base_model_prefix: checkpoints of the bare base model drop it from every name.
std::string base_prefix(nn::Family f) {
  return nn::family_traits(f).hf.base_prefix;
}

std::string input_embedding(nn::Family f) {
  return str(nn::family_traits(f).hf.embed_tokens, ".weight");
}

// The checkpoint tensor holding parameter `name`, or "" when there is none.
std::string resolve(const ShardedReader& r, const std::string& name, const std::string& prefix) {
  if (r.contains(name)) return name;
  if (name.starts_with(prefix) && r.contains(name.substr(prefix.size())))
    return name.substr(prefix.size());
  return "";
}

// A tensor name as read from a file: as it is when short and printable, else a short escaped
// excerpt.
std::string shown_name(const std::string& name) {
  const bool plain =
      name.size() <= 120 && std::all_of(name.begin(), name.end(), [](char ch) {
        return static_cast<unsigned char>(ch) >= 0x20 && static_cast<unsigned char>(ch) < 0x7f;
      });
  return plain ? name : quote_excerpt(name, 120);
}

std::string join(const std::vector<std::string>& names, size_t limit) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < limit; ++i)
    out += (i ? ", " : "") + shown_name(names[i]);
  if (names.size() > limit) out += str(", ... (", names.size() - limit, " more)");
  return out;
}

void check_value(const nn::Parameter& p) {
  if (!p.value.defined())
    throw ValueError(kComponent, str(p.name, ": the parameter has no value buffer"));
  if (p.value.shape() != p.shape)
    throw ShapeError(kComponent, str(p.name, ": the value ", p.value.describe(),
                                     " does not have the parameter's shape ", to_string(p.shape)));
}
}  // namespace

CheckpointSources resolve_checkpoint(const nn::ModelConfig& config,
                                     const std::vector<nn::Parameter*>& params,
                                     const ShardedReader& reader) {
  const std::filesystem::path& dir = reader.dir();
  const std::string prefix = base_prefix(config.family);
  const bool tied = config.tie_word_embeddings;
  CheckpointSources out;
  std::vector<std::string> missing;
  std::set<std::string> seen, used;
  for (nn::Parameter* p : params) {
    if (p == nullptr) throw ValueError(kComponent, "a null parameter in the list");
    if (!seen.insert(p->name).second) continue;  // a shared parameter listed twice
    std::string src = resolve(reader, p->name, prefix);
    if (src.empty() && tied && p->name == kHead)
      src = resolve(reader, input_embedding(config.family), prefix);
    if (src.empty()) {
      missing.push_back(p->name);
      continue;
    }
    const SafetensorsEntry& e = reader.entry(src);
    if (e.shape != p->shape)
      throw ShapeError(kComponent,
                       str(dir.string(), ": ", p->name, ": the checkpoint has ", to_string(e.shape),
                           " (\"", src, "\" in ", reader.file_of(src).path().filename().string(),
                           ") but the model expects ", to_string(p->shape)));
    out.sources.emplace_back(p, src);
    used.insert(src);
  }
  if (!missing.empty())
    throw FormatError(kComponent, str(dir.string(), ": the checkpoint lacks ", missing.size(),
                                      " tensor(s) the model needs: ", join(missing, 10)));
  for (const std::string& name : reader.names()) {
    // A tied head stored anyway duplicates the embedding the model already loaded.
    const bool tied_head = tied && (name == kHead);
    if (used.count(name) == 0 && !tied_head) out.unexpected.push_back(name);
  }
  return out;
}

void warn_unexpected(const std::filesystem::path& dir, const std::vector<std::string>& unexpected,
                     std::ostream* warnings) {
  if (!unexpected.empty() && warnings != nullptr)
    *warnings << "[hf_model] warning: " << dir.string() << ": ignoring " << unexpected.size()
              << " checkpoint tensor(s) the model does not use: " << join(unexpected, 64) << "\n";
}

LoadReport load_pretrained(const nn::ModelConfig& config, const std::vector<nn::Parameter*>& params,
                           const std::filesystem::path& dir, Stream stream,
                           std::ostream* warnings) {
  const ShardedReader reader(dir);
  // Resolve and check everything before reading anything, so a bad checkpoint changes nothing.
  CheckpointSources sources = resolve_checkpoint(config, params, reader);
  for (const auto& [p, src] : sources.sources)
    check_value(*p);
  LoadReport report;
  for (const auto& [p, src] : sources.sources) {
    reader.read(src, p->value, stream);
    report.loaded.push_back(p->name);
  }
  report.unexpected = std::move(sources.unexpected);
  warn_unexpected(dir, report.unexpected, warnings);
  return report;
}

std::vector<const nn::Parameter*> saved_parameters(const nn::ModelConfig& config,
                                                   const std::vector<nn::Parameter*>& params) {
  std::vector<const nn::Parameter*> out;
  std::set<std::string> seen;
  for (const nn::Parameter* p : params) {
    if (p == nullptr) throw ValueError(kComponent, "a null parameter in the list");
    if (!seen.insert(p->name).second) continue;
    if (config.tie_word_embeddings && p->name == kHead) continue;
    out.push_back(p);
  }
  return out;
}

void write_pretrained(const nn::ModelConfig& config, const std::vector<NamedTensor>& tensors,
                      const std::filesystem::path& dir, DType dtype, uint64_t max_shard_bytes,
                      Stream stream) {
  nn::ModelConfig out = config;
  out.torch_dtype = hf_torch_dtype(dtype);
  const std::string config_text = hf_config_json(out);  // refuses before any file is written
  SafetensorsWriteOptions options;
  options.metadata = {{"format", "pt"}};
  options.float_dtype = dtype;
  options.stream = stream;
  write_sharded_safetensors(dir, tensors, max_shard_bytes, options);
  write_file_atomic(dir / "config.json", config_text);
}

void save_pretrained(const nn::ModelConfig& config, const std::vector<nn::Parameter*>& params,
                     const std::filesystem::path& dir, DType dtype, uint64_t max_shard_bytes,
                     Stream stream) {
  hf_config_json(config);  // a config HF cannot express is refused before the values are looked at
  std::vector<NamedTensor> tensors;
  for (const nn::Parameter* p : saved_parameters(config, params)) {
    check_value(*p);
    tensors.push_back({p->name, p->value});
  }
  write_pretrained(config, tensors, dir, dtype, max_shard_bytes, stream);
}

}  // namespace zt::io
