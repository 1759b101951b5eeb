// The trainer's side of checkpoints: what a run saves besides its shards (the train state: step,
// data position, scheduler, loss scaler and the settings a resume must share) and the checks a
// resume makes against the manifest. The files themselves are checkpoint/'s ([Note: sharded
// checkpoint format] in checkpoint/manifest.h, [Note: checkpoint save protocol] in
// checkpoint/checkpoint_saver.h): `<out>/checkpoints/<tag>/` with one shard file per rank, and
// `<out>/checkpoints/latest`. Tested by tests/train/test_trainer_resume.cpp and
// tests/mpi/test_zero_parity.cpp (a stage-2 checkpoint resumed in stage 3) and
// tests/checkpoint/checkpoint_cli.py (resumes at other world sizes).
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "zerotrain/checkpoint/manifest.h"
#include "zerotrain/data/data_loader.h"
#include "zerotrain/nn/model_config.h"
#include "zerotrain/train/trainer.h"

namespace zt::train {

struct TrainState {
  int64_t step = 0;            // optimizer steps completed by the run (skipped ones included)
  data::DataLoaderState data;  // where the next step's batches start
  nlohmann::json config;       // resume_config_json of the run that saved it
  nlohmann::json scheduler;    // optim::Scheduler::state()
  nlohmann::json loss_scaler;  // LossScaler::state() of an fp16 run; null otherwise
};

// The TrainConfig fields that describe the run being resumed: the model config path, seq_len,
// micro_batch, grad_accum, seed, dtype, the world size and the learning-rate schedule.
nlohmann::json resume_config_json(const TrainConfig& config, int world);

// The manifest of a save at `state.step` without its files: layout, precision, the model config
// and the train state (checkpoint::CheckpointSaver fills in the files).
checkpoint::Manifest checkpoint_header(const TrainConfig& config, const nn::ModelConfig& model,
                                       int world, int64_t optimizer_step, const TrainState& state);

// The train state of a checkpoint's manifest. Throws FormatError naming the key.
TrainState train_state_of(const checkpoint::Manifest& m, const std::filesystem::path& dir);

// The train state of the checkpoint `given` names (checkpoint::resolve_checkpoint: a checkpoint, a
// checkpoints directory or a run's --out).
TrainState read_train_state(const std::filesystem::path& given);

// A resume's checks, each one line naming `dir` and what differs: the model (config.json keys),
// the dtype and precision mode, seq_len and seed, and the global batch (micro_batch x grad_accum x
// world: any split of the same global batch reads the same sequences, so the world size and the
// ZeRO stage may change); steps must be beyond the checkpoint's.
void check_resume(const checkpoint::Manifest& m, const TrainConfig& config,
                  const nn::ModelConfig& model, int world, const std::filesystem::path& dir);
// The part of check_resume that evaluating a checkpoint needs (--eval-only): the model config,
// dtype and precision mode it was saved with.
void check_checkpoint_model(const checkpoint::Manifest& m, const TrainConfig& config,
                            const nn::ModelConfig& model, const std::filesystem::path& dir);

// Bytes one checkpoint of this model takes on disk (values and optimizer state of every
// parameter, as state_slots stores them).
uint64_t checkpoint_bytes(const TrainConfig& config, const nn::ModelConfig& model);
// Throws ValueError naming the directory, the bytes needed and free when `dir`'s file system has
// no room for one checkpoint of `bytes`.
void check_checkpoint_space(const std::filesystem::path& dir, uint64_t bytes);

// Rewrites a metrics JSONL file (atomically) without the lines of steps after `step`, and without
// lines that do not parse (one cut short by a crash): what a run interrupted after its last
// checkpoint logged is dropped before the resumed run logs those steps again. No file: nothing.
void drop_metrics_after(const std::filesystem::path& path, int64_t step);

}  // namespace zt::train
