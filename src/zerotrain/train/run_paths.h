// The paths section of the run configuration: what a run reads and where it writes. The trainer
// checks that they exist when it opens them. Tested by tests/train/test_train_outputs.cpp.
#pragma once

#include <filesystem>

namespace zt::train {

struct RunPaths {
  // A Hugging Face model directory (config.json, with or without weights) or a config.json file;
  // without weights the model starts from a seeded random init.
  std::filesystem::path model;
  std::filesystem::path data;  // token file (zerotrain data prepare)
  std::filesystem::path out;   // model/, checkpoint/, metrics.jsonl, loss.png
  // A checkpoint directory (`<out>/checkpoint` of an earlier run) to continue from: its weights,
  // optimizer state, data position and step replace the init; training goes on to `steps`.
  std::filesystem::path resume;
  // --deepspeed: the ds_config the run's DeepSpeed settings came from (empty: flags only), so that
  // advice names its keys rather than flags that would contradict it.
  std::filesystem::path ds_config;
};

}  // namespace zt::train
