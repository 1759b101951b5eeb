// The trainer's side of checkpoints; see checkpoint.h.
#include "zerotrain/train/checkpoint.h"

#include <sstream>
#include <string>
#include <vector>

#include "zerotrain/checkpoint/checkpoint_store.h"
#include "zerotrain/core/allocator.h"
#include "zerotrain/core/error.h"
#include "zerotrain/core/files.h"
#include "zerotrain/core/io_error.h"
#include "zerotrain/core/json_util.h"
#include "zerotrain/io/hf_config.h"
#include "zerotrain/optim/state_slots.h"
#include "zerotrain/train/train_scheduler.h"

namespace zt::train {

namespace fs = std::filesystem;

namespace {

constexpr const char* kComponent = "checkpoint";

fs::path model_config_path(const fs::path& model) {
  return fs::is_directory(model) ? model / "config.json" : model;
}

// The saved value of `key` in a message: its JSON text, or "missing".
std::string saved_text(const nlohmann::json& saved, const char* key) {
  if (!saved.is_object() || !saved.contains(key)) return "missing";
  const std::string text = saved[key].dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
  return text.size() <= 40 ? text : describe_json(saved[key]);  // a hostile file: a short excerpt
}

[[noreturn]] void refuse(const fs::path& dir, const std::string& what) {
  throw ValueError(kComponent, str("cannot resume from ", dir.string(), ": ", what));
}

}  // namespace

nlohmann::json resume_config_json(const TrainConfig& c, int world) {
  nlohmann::json j;
  j["model_config"] = model_config_path(c.paths.model).string();
  j["seq_len"] = c.data.seq_len;
  j["micro_batch"] = c.data.micro_batch;
  j["grad_accum"] = c.data.grad_accum;
  j["world_size"] = world;
  j["global_batch"] = c.data.micro_batch * c.data.grad_accum * world;
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

checkpoint::Manifest checkpoint_header(const TrainConfig& c, const nn::ModelConfig& model,
                                       int world, int64_t optimizer_step, const TrainState& state) {
  checkpoint::Manifest m;
  m.step = state.step;
  m.optimizer_step = optimizer_step;
  m.world_size = world;
  m.stage = c.zero.stage;
  m.dtype = c.precision.dtype;
  m.precision = std::string(optim::precision_name(c.precision.mode));
  m.model_config = io::hf_config_json(model);
  m.train_state = {{"step", state.step},
                   {"data", data::to_json(state.data)},
                   {"config", state.config},
                   {"scheduler", state.scheduler},
                   {"loss_scaler", state.loss_scaler}};
  return m;
}

TrainState train_state_of(const checkpoint::Manifest& m, const fs::path& dir) {
  const std::string where = (dir / checkpoint::kManifestName).string();
  const nlohmann::json& j = m.train_state;
  for (const char* key : {"step", "data", "config", "scheduler", "loss_scaler"})
    if (!j.contains(key))
      throw FormatError(kComponent, str(where, ": train_state.", key, " is missing"));
  if (!j["step"].is_number_integer() || j["step"].get<int64_t>() != m.step)
    throw FormatError(kComponent, str(where, ": train_state.step ", describe_json(j["step"]),
                                      " disagrees with step ", m.step));
  if (m.optimizer_step > m.step)
    throw FormatError(kComponent, str(where, ": optimizer_step ", m.optimizer_step,
                                      " is beyond step ", m.step));
  TrainState s;
  s.step = m.step;
  s.data = data::data_loader_state_from_json(j["data"]);
  s.config = j["config"];
  s.scheduler = j["scheduler"];
  s.loss_scaler = j["loss_scaler"];
  return s;
}

TrainState read_train_state(const fs::path& given) {
  const fs::path dir = checkpoint::resolve_checkpoint(given);
  return train_state_of(checkpoint::read_manifest(dir), dir);
}

void check_checkpoint_model(const checkpoint::Manifest& m, const TrainConfig& c,
                            const nn::ModelConfig& model, const fs::path& dir) {
  const nn::ModelConfig saved_model = io::parse_hf_config(m.model_config, checkpoint::model_config_source(dir));
  const std::vector<std::string> diffs = io::config_differences(saved_model, model);
  if (!diffs.empty()) {
    std::string joined;
    for (size_t i = 0; i < diffs.size() && i < 3; ++i)
      joined += (i ? "; " : "") + diffs[i];
    refuse(dir, str("its model differs (", joined, diffs.size() > 3 ? "; ..." : "", ")"));
  }
  if (m.dtype != c.precision.dtype)
    refuse(dir, str("dtype is ", dtype_name(c.precision.dtype), " but the checkpoint was saved with ",
                    dtype_name(m.dtype)));
  if (m.precision != optim::precision_name(c.precision.mode))
    refuse(dir, str("precision mode is ", optim::precision_name(c.precision.mode),
                    " but the checkpoint was saved with ", m.precision));
}

void check_resume(const checkpoint::Manifest& m, const TrainConfig& c,
                  const nn::ModelConfig& model, int world, const fs::path& dir) {
  check_checkpoint_model(m, c, model, dir);
  const nlohmann::json saved = m.train_state.value("config", nlohmann::json());
  const nlohmann::json now = resume_config_json(c, world);
  for (const char* key : {"seq_len", "seed", "global_batch"}) {
    if (saved.is_object() && saved.contains(key) && saved[key] == now[key]) continue;
    std::string how;
    if (std::string(key) == "global_batch")
      how = str(" (micro_batch x grad_accum x world: ", c.data.micro_batch, " x ", c.data.grad_accum,
                " x ", world, "; saved ", saved_text(saved, "micro_batch"), " x ",
                saved_text(saved, "grad_accum"), " x ", saved_text(saved, "world_size"), ")");
    refuse(dir, str(key, " is ", now[key].dump(), " but the checkpoint was saved with ", key, " ",
                    saved_text(saved, key), how));
  }
  if (m.step >= c.steps)
    throw ValueError("train", str("steps is ", c.steps, " but the checkpoint ", dir.string(),
                                  " is already at step ", m.step, " (steps counts from the first run)"));
}

uint64_t checkpoint_bytes(const TrainConfig& c, const nn::ModelConfig& model) {
  uint64_t per_element = dtype_size(c.precision.dtype);
  for (const optim::StateSlot& slot :
       optim::state_slots(c.precision.dtype, c.precision.mode, c.optimizer))
    per_element += dtype_size(slot.dtype);
  return static_cast<uint64_t>(model.num_params()) * per_element;
}

void check_checkpoint_space(const fs::path& dir, uint64_t bytes) {
  std::error_code ec;
  fs::path probe = dir;
  while (!probe.empty() && !fs::exists(probe, ec)) probe = probe.parent_path();
  const fs::space_info space = fs::space(probe.empty() ? fs::path(".") : probe, ec);
  if (ec) return;  // nothing to measure: the save will say what fails
  if (space.available < bytes)
    throw ValueError(kComponent, str(dir.string(), ": one checkpoint needs ", format_bytes(bytes),
                                     " but its file system has ", format_bytes(space.available),
                                     " free (--save-every / --keep-checkpoints, or another --out)"));
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
