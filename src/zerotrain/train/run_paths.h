// The paths section of the run configuration: what a run reads and where it writes. The trainer
// checks that they exist when it opens them. Tested by tests/train/test_train_outputs.cpp.
#pragma once

#include <filesystem>

#include "zerotrain/io/model_source.h"

namespace zt::train {

struct RunPaths {
  // A Hugging Face model directory (config.json and its weights) or a config.json file.
  std::filesystem::path model;
  // How the model starts (io/model_source.h): a directory's weights, or a seeded random init
  // asked for by --init random or by a `model` that is a config.json; a directory without
  // loadable weights is an error naming what it holds.
  io::ModelInit init = io::ModelInit::from_path;
  std::filesystem::path data;  // token file (zerotrain data prepare)
  std::filesystem::path out;   // model/, checkpoints/, metrics.jsonl, loss.png
  // A checkpoint to continue from (checkpoint::resolve_checkpoint: a checkpoint, an earlier run's
  // `<out>/checkpoints` or that run's --out, which mean its `latest`): its weights,
  // optimizer state, data position and step replace the init; training goes on to `steps`.
  std::filesystem::path resume;
  // --deepspeed: the ds_config the run's DeepSpeed settings came from (empty: flags only), so that
  // advice names its keys rather than flags that would contradict it.
  std::filesystem::path ds_config;
};

}  // namespace zt::train
