// A tiny training setup for the trainer tests: a tiny llama config and a token file of 600
// pseudo-random tokens, with a 6-step run logging every step. Used by
// tests/train/test_trainer_resume.cpp and tests/train/test_train_outputs.cpp.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "nn/nn_test_util.h"
#include "support/token_fixture.h"
#include "zerotrain/data/token_file.h"
#include "zerotrain/io/hf_config.h"
#include "zerotrain/train/trainer.h"

namespace zt::test {

// config.json of a tiny llama and a token file of 600 pseudo-random tokens under `dir`.
inline train::TrainConfig tiny_train_config(const std::filesystem::path& dir, DType dtype) {
  const nn::ModelConfig mc = test::tiny_config(nn::Family::llama);
  io::write_hf_config(mc, dir / "config.json");
  write_random_tokens(dir / "tokens.bin", mc.vocab_size, 600, 88172645463325252ull);

  train::TrainConfig c;
  c.paths.model = dir / "config.json";
  c.paths.data = dir / "tokens.bin";
  c.steps = 6;
  c.data.micro_batch = 2;
  c.data.seq_len = 8;
  c.data.grad_accum = 2;
  c.schedule.lr = 1e-2;
  c.schedule.warmup_steps = 2;
  c.schedule.decay = "cosine";
  c.data.seed = 7;
  c.precision.dtype = dtype;
  c.reporting.log_every = 1;
  return c;
}

// The lines of a text file.
inline std::vector<std::string> text_lines(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);)
    out.push_back(line);
  return out;
}

}  // namespace zt::test
