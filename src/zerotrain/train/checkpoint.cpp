// Saving and loading the trainer's checkpoint directory; see checkpoint.h.
#include "zerotrain/train/checkpoint.h"

#include <sstream>
#include <string>
#include <vector>

#include "zerotrain/core/error.h"
#include "zerotrain/core/files.h"
#include "zerotrain/core/io_error.h"
#include "zerotrain/core/json_util.h"
#include "zerotrain/io/hf_model.h"
#include "zerotrain/io/safetensors.h"
#include "zerotrain/train/train_scheduler.h"

namespace zt::train {

namespace fs = std::filesystem;

namespace {

constexpr const char* kComponent = "checkpoint";
constexpr const char* kModelDir = "model";
constexpr const char* kOptimizerFile = "optimizer.safetensors";
constexpr const char* kStateFile = "train_state.json";

fs::path model_config_path(const fs::path& model) {
  return fs::is_directory(model) ? model / "config.json" : model;
}

void write_optimizer_state(const fs::path& path, const optim::OptimizerState& state,
                           Stream stream) {
  std::vector<io::NamedTensor> tensors;
  tensors.reserve(state.tensors.size());
  for (const auto& [name, t] : state.tensors)
    tensors.push_back({name, t});
  io::SafetensorsWriteOptions options;
  options.metadata["step"] = std::to_string(state.step);
  options.stream = stream;
  io::write_safetensors(path, tensors, options);
}

optim::OptimizerState read_optimizer_state(const fs::path& path) {
  const io::SafetensorsReader reader(path);
  optim::OptimizerState state;
  const auto it = reader.metadata().find("step");
  if (it == reader.metadata().end())
    throw FormatError(kComponent, str(path.string(), ": metadata has no \"step\""));
  try {
    size_t used = 0;
    state.step = std::stoll(it->second, &used);
    if (used != it->second.size()) throw std::invalid_argument("trailing characters");
  } catch (const std::exception&) {
    throw FormatError(kComponent, str(path.string(), ": metadata step ", quote_excerpt(it->second),
                                      " is not an integer"));
  }
  for (const std::string& name : reader.names())
    state.tensors[name] = reader.read(name, DType::f32);
  return state;
}

// The saved value of `key` in a message: its JSON text, or "missing".
std::string saved_text(const nlohmann::json& saved, const char* key) {
  if (!saved.is_object() || !saved.contains(key)) return "missing";
  const std::string text = saved[key].dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
  return text.size() <= 40 ? text : describe_json(saved[key]);  // a hostile file: a short excerpt
}

}  // namespace

nlohmann::json resume_config_json(const TrainConfig& c) {
  nlohmann::json j;
  j["model_config"] = model_config_path(c.paths.model).string();
  j["seq_len"] = c.data.seq_len;
  j["micro_batch"] = c.data.micro_batch;
  j["grad_accum"] = c.data.grad_accum;
  j["seed"] = c.data.seed;
  j["dtype"] = std::string(dtype_name(c.precision.dtype));
  j["lr"] = c.schedule.lr;
  j["warmup_steps"] = c.schedule.warmup_steps;
  j["schedule"] = c.schedule.decay;
  j["min_lr_ratio"] = c.schedule.min_lr_ratio;
  if (c.schedule.deepspeed)
    j["scheduler"] = ds_scheduler_json(*c.schedule.deepspeed, c.schedule.lr);
  j["steps"] = c.steps;
  return j;
}

void check_resume_config(const nlohmann::json& saved, const TrainConfig& config,
                         const fs::path& dir) {
  const nlohmann::json now = resume_config_json(config);
  for (const char* key : {"seq_len", "micro_batch", "grad_accum", "seed", "dtype"}) {
    if (saved.is_object() && saved.contains(key) && saved[key] == now[key]) continue;
    throw ValueError(kComponent,
                     str("cannot resume from ", dir.string(), ": ", key, " is ", now[key].dump(),
                         " but the checkpoint was saved with ", key, " ", saved_text(saved, key)));
  }
}

fs::path save_checkpoint(const fs::path& out, nn::Transformer& model, DType dtype,
                         const optim::OptimizerState& optimizer, const TrainState& state,
                         Stream stream) {
  const fs::path final_dir = out / kCheckpointDirName;
  const fs::path tmp = out / (std::string(kCheckpointDirName) + ".tmp");
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  io::save_pretrained(model, tmp / kModelDir, dtype, io::kDefaultMaxShardBytes, stream);
  write_optimizer_state(tmp / kOptimizerFile, optimizer, stream);
  nlohmann::json j;
  j["step"] = state.step;
  j["data"] = data::to_json(state.data);
  j["config"] = state.config;
  if (!state.scheduler.is_null()) j["scheduler"] = state.scheduler;
  if (!state.loss_scaler.is_null()) j["loss_scaler"] = state.loss_scaler;
  write_file_atomic(tmp / kStateFile, j.dump(2) + "\n");
  write_file_atomic(tmp / kCheckpointCompleteName, str("step ", state.step, "\n"));
  fs::remove_all(final_dir);
  fs::rename(tmp, final_dir);
  return final_dir;
}

TrainState read_train_state(const fs::path& dir) {
  if (!fs::exists(dir / kCheckpointCompleteName))
    throw ValueError(kComponent,
                     str("cannot resume from ", dir.string(), ": no ", kCheckpointCompleteName,
                         " marker (not a checkpoint, or its save did not finish)"));
  const fs::path path = dir / kStateFile;
  const std::string text = read_text_file(path, kComponent);
  const nlohmann::json j = parse_json(text, kComponent, path.string());
  if (!j.is_object()) throw FormatError(kComponent, str(path.string(), ": not a JSON object"));
  for (const char* key : {"step", "data", "config"})
    if (!j.contains(key))
      throw FormatError(kComponent, str(path.string(), ": missing key \"", key, "\""));
  if (!j["step"].is_number_integer() || j["step"].get<int64_t>() < 0)
    throw FormatError(kComponent, str(path.string(), ": step must be a non-negative integer, got ",
                                      describe_json(j["step"])));
  TrainState s;
  s.step = j["step"].get<int64_t>();
  s.data = data::data_loader_state_from_json(j["data"]);
  s.config = j["config"];
  if (j.contains("scheduler")) s.scheduler = j["scheduler"];
  if (j.contains("loss_scaler")) s.loss_scaler = j["loss_scaler"];
  return s;
}

optim::OptimizerState load_checkpoint_weights(const fs::path& dir, nn::Transformer& model,
                                              Stream stream) {
  io::load_pretrained(model, dir / kModelDir, stream);
  return read_optimizer_state(dir / kOptimizerFile);
}

void drop_metrics_after(const fs::path& path, int64_t step) {
  if (!fs::exists(path)) return;
  std::istringstream in(read_text_file(path, kComponent));
  std::string kept;
  for (std::string line; std::getline(in, line);) {
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("step") || !j["step"].is_number_integer())
      continue;
    if (j["step"].get<int64_t>() > step) continue;
    kept += line;
    kept += '\n';
  }
  write_file_atomic(path, kept);
}

}  // namespace zt::train
