// The set-up every run shares, before its first step or its one evaluation (--eval-only): what it
// reads and checks before anything is built (RunInputs: the model's config, the held-out set, the
// checkpoint a resume continues) and what it builds from that (RunModel: the model, the task's
// data, the ZeRO stage with its optimizer, the resumed shard read into it). The training loop on
// top of them is training_session.h. Tested through train() by tests/train/test_trainer_resume.cpp,
// tests/train/test_train_inputs.cpp and tests/train/test_evaluation.cpp.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "zerotrain/checkpoint/checkpoint_reader.h"
#include "zerotrain/core/stream.h"
#include "zerotrain/data/data_loader.h"
#include "zerotrain/io/model_source.h"
#include "zerotrain/nn/model_config.h"
#include "zerotrain/nn/transformer.h"
#include "zerotrain/train/checkpoint.h"
#include "zerotrain/train/evaluation.h"
#include "zerotrain/train/task.h"
#include "zerotrain/train/trainer.h"
#include "zerotrain/zero/shard_init.h"
#include "zerotrain/zero/zero_context.h"
#include "zerotrain/zero/zero_stage.h"

namespace zt::train {

struct RunInputs {
  // Reads and checks, in this order: the model's source and config.json, seq_len against its
  // positions, the fit on this machine (model_fit.h), the held-out file ([Note: evaluation]), and
  // when resuming the checkpoint against the config (checkpoint.h). `c` is validated already.
  RunInputs(const TrainConfig& c, const TrainCallbacks& cb);
  // "the checkpoint DIR" when resuming, else what the source says ("the weights of DIR/...").
  std::string init_description() const;

  int rank = 0, world = 1;
  bool resuming = false;
  io::ModelSource source;  // a resumed run's weights come from the checkpoint instead
  nn::ModelConfig model;
  std::optional<Evaluator> evaluator;  // with --eval-data
  // The checkpoint a resume reads: every rank reads its own shard from it, whatever the world
  // size and stage that saved it.
  std::optional<checkpoint::CheckpointReader> saved;
  TrainState resumed;  // step 0 and the start of the data when not resuming
};

struct RunModel {
  // Builds the model (values as [Note: values built in place] in zero/shard_init.h says), this
  // rank's data (none with --eval-only), and the ZeRO stage; reads the resumed shard into it and
  // checks that every rank holds the same parameters.
  RunModel(const TrainConfig& c, const TrainCallbacks& cb, RunInputs& in, const Task& task);

  Stream stream;  // the device's default stream; none on the CPU
  // zero.Init: stage 3 builds only this rank's shards, the model itself gets no values.
  bool zero_init = false;
  std::unique_ptr<nn::Transformer> model;
  // Where the engine's values come from when the model holds none (zero.Init, seeded in place).
  std::unique_ptr<zero::ShardSource> values;
  std::optional<data::DataLoader> loader;  // none with --eval-only
  std::optional<zero::ZeroContext> context;
  std::unique_ptr<zero::ZeroStage> engine;
  double resume_load_s = 0;  // the read of the resumed shard
};

}  // namespace zt::train
