// The single-process trainer's checkpoint: everything a run needs to continue exactly where it
// stopped. Layout of `<out>/checkpoint/`:
//   model/                  the parameters in Hugging Face layout, stored in the training dtype
//   optimizer.safetensors   the full optimizer state (optim/optimizer_state.h: f32, bf16 moments
//                           in low precision), metadata {"step": updates taken}
//   train_state.json        {"step", "data": DataLoaderState, "config": resume_config_json,
//                            "scheduler": the lr scheduler's state,
//                            "loss_scaler": LossScaler::state(), fp16 runs only}
//   COMPLETE                written last; a directory without it is never resumed from
// A save goes into `<out>/checkpoint.tmp/`, which is renamed over `<out>/checkpoint/` once
// COMPLETE is in it, so an interrupted save never leaves a checkpoint that looks complete.
// Tested by tests/train/test_trainer_resume.cpp.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "zerotrain/core/stream.h"
#include "zerotrain/data/data_loader.h"
#include "zerotrain/nn/transformer.h"
#include "zerotrain/optim/optimizer_state.h"
#include "zerotrain/train/trainer.h"

namespace zt::train {

inline constexpr const char* kCheckpointDirName = "checkpoint";
inline constexpr const char* kCheckpointCompleteName = "COMPLETE";

struct TrainState {
  int64_t step = 0;            // optimizer steps completed by the run
  data::DataLoaderState data;  // where the next step's batches start
  nlohmann::json config;       // resume_config_json of the run that saved it
  nlohmann::json scheduler;    // optim::Scheduler::state(); null in checkpoints older than it
  nlohmann::json loss_scaler;  // LossScaler::state() of an fp16 run; null otherwise
};

// The TrainConfig fields that describe the run being resumed: the model config path, seq_len,
// micro_batch, grad_accum, seed, dtype and the learning-rate schedule.
nlohmann::json resume_config_json(const TrainConfig& config);

// Throws ValueError naming the field and both values when seq_len, micro_batch, grad_accum, seed
// or dtype of `config` differ from the saved ones (or are missing from them); `dir` names the
// checkpoint in the message.
void check_resume_config(const nlohmann::json& saved, const TrainConfig& config,
                         const std::filesystem::path& dir);

// Writes `<out>/checkpoint/` as described above, replacing an earlier one; returns its path.
// `optimizer`: the full state (the ZeRO engine's full_optimizer_state, zero/zero_stage.h).
std::filesystem::path save_checkpoint(const std::filesystem::path& out, nn::Transformer& model,
                                      DType dtype, const optim::OptimizerState& optimizer,
                                      const TrainState& state, Stream stream = {});

// Reads train_state.json of the checkpoint `dir`. Throws ValueError when `dir` has no COMPLETE
// marker, FormatError naming the file or key when train_state.json is missing or malformed.
TrainState read_train_state(const std::filesystem::path& dir);

// Loads the model weights of the checkpoint `dir` (read_train_state checks it first) and returns
// its full optimizer state (tensors as saved, read as f32 into host memory), which the ZeRO
// engine starts from (zero::make_zero_stage).
optim::OptimizerState load_checkpoint_weights(const std::filesystem::path& dir,
                                              nn::Transformer& model, Stream stream = {});

// Rewrites a metrics JSONL file (atomically) without the lines of steps after `step`, and without
// lines that do not parse (one cut short by a crash): what a run interrupted after its last
// checkpoint logged is dropped before the resumed run logs those steps again. No file: nothing.
void drop_metrics_after(const std::filesystem::path& path, int64_t step);

}  // namespace zt::train
