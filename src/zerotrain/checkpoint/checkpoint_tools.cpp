// consolidate, universal and inspect; see checkpoint_tools.h.
#include "zerotrain/checkpoint/checkpoint_tools.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "zerotrain/checkpoint/checkpoint_reader.h"
#include "zerotrain/checkpoint/checkpoint_store.h"
#include "zerotrain/core/allocator.h"
#include "zerotrain/core/error.h"
#include "zerotrain/core/files.h"
#include "zerotrain/io/hf_config.h"
#include "zerotrain/io/hf_model.h"
#include "zerotrain/io/safetensors.h"
#include "zerotrain/nn/transformer.h"
#include "zerotrain/optim/state_slots.h"

namespace zt::checkpoint {

namespace fs = std::filesystem;

namespace {

constexpr const char* kComponent = "checkpoint";
constexpr const char* kMaster = ".master";

// The model of a checkpoint, without values: its parameters' names, shapes and order.
nn::Transformer skeleton_of(const Manifest& m, const fs::path& dir) {
  nn::TransformerOptions o;
  o.allocate = false;
  o.allocate_grads = false;
  return nn::Transformer(io::parse_hf_config(m.model_config, model_config_source(dir)), o);
}

// The whole tensor `name` read from the checkpoint, as stored, shaped `shape`.
Tensor read_whole(CheckpointReader& reader, const std::string& name, const Shape& shape) {
  const CheckpointReader::TensorInfo& info = reader.tensors().at(name);
  Tensor t = Tensor::empty({numel_of(info.shape)}, info.dtype, Device::cpu());
  reader.read({name, info.shape, 0, numel_of(info.shape)}, t, {});
  return t.view(shape);
}

// The parameter a stored tensor belongs to: itself, or the name before a state slot's suffix.
std::string owner_of(const std::string& tensor, const std::set<std::string>& params) {
  if (params.contains(tensor)) return tensor;
  for (const char* suffix : optim::all_state_suffixes()) {
    const std::string_view s(suffix);
    if (tensor.ends_with(s) && params.contains(tensor.substr(0, tensor.size() - s.size())))
      return tensor.substr(0, tensor.size() - s.size());
  }
  return {};
}

// The tools write only into a directory of their own: never over a model, another checkpoint or
// the source itself (whose files they would replace while reading them).
void require_new_directory(const fs::path& dst) {
  std::error_code ec;
  if (fs::exists(dst, ec) && !(fs::is_directory(dst, ec) && fs::is_empty(dst, ec)))
    throw ValueError(kComponent, str(dst.string(), " exists and is not empty (give a new directory)"));
}

}  // namespace

ToolReport consolidate_checkpoint(const fs::path& src, const fs::path& out,
                                  const ConsolidateOptions& options) {
  CheckpointReader reader(resolve_checkpoint(src));
  require_new_directory(out);
  const Manifest& m = reader.manifest();
  nn::Transformer model = skeleton_of(m, reader.dir());
  const DType dtype = options.dtype.value_or(m.dtype);
  if (!is_floating(dtype))
    throw ValueError(kComponent, str("--dtype must be f32, bf16 or f16, got ", dtype_name(dtype)));
  const std::vector<const nn::Parameter*> params =
      io::saved_parameters(model.config(), model.parameters());
  ToolReport report;
  int64_t done = 0;
  std::vector<io::NamedTensor> tensors;
  for (const nn::Parameter* p : params) {
    // The f32 master when there is one: exact for any output dtype (the value is its rounding).
    const std::string from =
        reader.tensors().contains(p->name + kMaster) ? p->name + kMaster : p->name;
    if (!reader.tensors().contains(from))
      throw ValueError(kComponent, str("the checkpoint ", reader.dir().string(), " has no tensor ",
                                       p->name, " of its model"));
    const auto load = [&reader, &report, &done, &options, from, shape = p->shape,
                       total = static_cast<int64_t>(params.size())] {
      Tensor t = read_whole(reader, from, shape);
      report.largest_tensor = std::max<uint64_t>(report.largest_tensor, t.nbytes());
      if (options.progress) options.progress(++done, total);
      return t;
    };
    report.bytes += static_cast<uint64_t>(numel_of(p->shape)) * dtype_size(dtype);
    tensors.push_back(
        io::NamedTensor::lazy(p->name, p->shape, reader.tensors().at(from).dtype, load));
  }
  io::write_pretrained(model.config(), tensors, out, dtype, options.max_shard_bytes);
  report.tensors = static_cast<int64_t>(tensors.size());
  for (const fs::directory_entry& e : fs::directory_iterator(out))
    report.files.push_back(e.path().filename().string());
  std::sort(report.files.begin(), report.files.end());
  return report;
}

ToolReport universal_checkpoint(const fs::path& src, const fs::path& dst,
                                const ToolProgress& progress) {
  CheckpointReader reader(resolve_checkpoint(src));
  require_new_directory(dst);
  nn::Transformer model = skeleton_of(reader.manifest(), reader.dir());
  std::set<std::string> params;
  for (const nn::Parameter* p : model.parameters())
    params.insert(p->name);
  std::map<std::string, std::vector<std::string>> by_param;
  for (const auto& [name, info] : reader.tensors()) {
    const std::string owner = owner_of(name, params);
    if (owner.empty())
      throw ValueError(kComponent, str("the checkpoint ", reader.dir().string(), " holds ", name,
                                       ", which belongs to no parameter of its model"));
    by_param[owner].push_back(name);
  }
  fs::create_directories(dst);
  Manifest m = reader.manifest();
  m.universal = true;
  m.files.clear();
  m.weights_dtype.reset();  // the Hugging Face copy stays with the source
  ToolReport report;
  for (const auto& [param, names] : by_param) {
    SavedFile f;
    f.name = param + ".safetensors";
    f.rank = -1;
    std::vector<io::NamedTensor> tensors;
    uint64_t held = 0;
    for (const std::string& name : names) {
      const CheckpointReader::TensorInfo& info = reader.tensors().at(name);
      const Tensor t = read_whole(reader, name, {numel_of(info.shape)});
      f.tensors.push_back(
          {name, info.shape, 0, numel_of(info.shape), info.dtype, crc32_of(t.data(), t.nbytes())});
      held += t.nbytes();
      tensors.push_back({name, t});
    }
    io::write_safetensors(dst / f.name, tensors);
    f.bytes = static_cast<uint64_t>(fs::file_size(dst / f.name));
    report.bytes += held;
    report.largest_tensor = std::max(report.largest_tensor, held);
    report.tensors += static_cast<int64_t>(names.size());
    report.files.push_back(f.name);
    m.files.push_back(std::move(f));
    if (progress) progress(static_cast<int64_t>(m.files.size()), static_cast<int64_t>(by_param.size()));
  }
  write_manifest(dst, m);
  write_file_atomic(dst / kCompleteName, str("step ", m.step, "\n"));
  return report;
}

std::string inspect_checkpoint(const fs::path& given, bool verify,
                               std::vector<std::string>& problems) {
  std::ostringstream o;
  // A checkpoints directory or a run's --out: what is in it first.
  std::error_code ec;
  for (const fs::path& root : {given, given / kCheckpointsDirName}) {
    if (!fs::is_directory(root, ec) || fs::exists(root / kManifestName, ec)) continue;
    std::vector<fs::path> entries;
    for (const fs::directory_entry& e : fs::directory_iterator(root, ec))
      if (e.is_directory(ec) && e.path().filename().string().rfind("step-", 0) == 0)
        entries.push_back(e.path());
    if (entries.empty()) continue;
    std::sort(entries.begin(), entries.end());
    const std::optional<fs::path> latest = latest_checkpoint(root);
    o << "checkpoints in " << root.string() << ":\n";
    for (const fs::path& e : entries) {
      const std::string name = e.filename().string();
      const bool complete = fs::exists(e / kCompleteName, ec) && fs::exists(e / kManifestName, ec);
      const char* state = name.find(".old-") != std::string::npos
                              ? "   replaced by a newer save of its step; removed by the next save"
                          : name.find('.') != std::string::npos || !complete
                              ? "   unfinished save: never resumed from, removed by the next save"
                              : "";
      o << "  " << name << state << (latest && *latest == e ? "   <- latest" : "") << "\n";
    }
    break;
  }
  CheckpointReader reader(resolve_checkpoint(given));
  const Manifest& m = reader.manifest();
  const nn::ModelConfig mc = io::parse_hf_config(m.model_config, model_config_source(reader.dir()));
  uint64_t file_bytes = 0;
  for (const SavedFile& f : m.files)
    file_bytes += f.bytes;
  o << "checkpoint        " << reader.dir().string() << "\n"
    << "format            " << kFormatName << " version " << m.version << "\n"
    << "step              " << m.step << " (optimizer updates " << m.optimizer_step << ")\n"
    << "saved by          " << m.world_size << " rank(s), ZeRO stage " << m.stage
    << (m.universal ? ", rewritten per parameter (universal)" : "") << "\n"
    << "precision         " << dtype_name(m.dtype) << " parameters, " << m.precision << "\n"
    << "model             " << io::hf_model_type(mc.family) << ", " << mc.num_layers
    << " layers, hidden " << mc.hidden_size << ", vocab " << mc.vocab_size << ", "
    << mc.num_params() << " parameters\n"
    << "files             " << m.files.size() << " (" << format_bytes(file_bytes) << ")\n"
    << "tensors           " << reader.tensors().size() << "\n";
  if (m.weights_dtype)
    o << "weights           " << kWeightsDir << "/ (Hugging Face safetensors, "
      << dtype_name(*m.weights_dtype) << ")\n";
  for (const auto& [name, info] : reader.tensors())
    o << "  " << name << "  " << dtype_name(info.dtype) << " " << to_string(info.shape) << "\n";
  if (verify) {
    problems = reader.verify_all();
    if (problems.empty())
      o << "verified          every piece of " << m.files.size() << " file(s) matches its checksum\n";
  }
  return o.str();
}

}  // namespace zt::checkpoint
