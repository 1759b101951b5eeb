// The short sample `zerotrain train` prints at the end (the writing rank only): a greedy
// continuation of --sample-prompt by the model just saved in <out>/model, when a tokenizer.json
// is known (--sample-tokenizer, or the one beside --model). The tokenizer is copied into
// <out>/model, so `zerotrain generate --model <out>/model` works on its own. --sample-tokens 0
// turns it off; a failure is one line on stderr and never fails the run. Tested by the
// train_prints_sample ctest (tests/CMakeLists.txt).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <filesystem>
#include <string>

#include "zerotrain/core/device.h"
#include "zerotrain/core/dtype.h"

namespace zt::cli {

struct SampleOptions {
  int64_t tokens = 32;
  std::string prompt = "And God said";
  std::string tokenizer;  // empty: tokenizer.json beside --model
};

void add_sample_options(CLI::App& cmd, SampleOptions& options);

// model: the --model path (where a tokenizer may lie); model_dir: the saved <out>/model.
void print_training_sample(const SampleOptions& options, const std::filesystem::path& model,
                           const std::filesystem::path& model_dir, Device device, DType dtype);

}  // namespace zt::cli
