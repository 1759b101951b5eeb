// Helpers of the multi-rank training tests (test_ddp_training.cpp, test_zero_parity.cpp): a shared
// temp directory, a tiny model config plus token file written by rank 0, and readers of a run's
// metrics and files.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mpi/mpi_test_env.h"
#include "support/token_fixture.h"
#include "zerotrain/data/token_file.h"
#include "zerotrain/io/hf_config.h"
#include "zerotrain/nn/model_config.h"

namespace zt::test {

// A directory every rank sees: rank 0 creates it and broadcasts the path.
inline std::filesystem::path shared_temp_dir(const std::string& name) {
  comm::ProcessGroup& pg = process_group();
  std::vector<uint8_t> bytes;
  if (pg.rank() == 0) {
    const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                      ("zt_mpi_" + name + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const std::string s = dir.string();
    bytes.assign(s.begin(), s.end());
  }
  bytes = pg.broadcast_bytes(bytes);
  return std::filesystem::path(std::string(bytes.begin(), bytes.end()));
}

// A tiny llama: 2 layers, hidden 32, GQA 4/2 heads of 8, vocab 50.
inline nn::ModelConfig tiny_llama() {
  nn::ModelConfig mc;
  mc.family = nn::Family::llama;
  mc.hidden_size = 32;
  mc.num_layers = 2;
  mc.num_heads = 4;
  mc.num_kv_heads = 2;
  mc.head_dim = 8;
  mc.intermediate_size = 64;
  mc.vocab_size = 50;
  mc.max_position_embeddings = 16;
  return mc;
}

// A tiny gpt2 with tied word embeddings (the head shares the embedding block's table).
inline nn::ModelConfig tiny_gpt2() {
  nn::ModelConfig mc;
  mc.family = nn::Family::gpt2;
  mc.hidden_size = 32;
  mc.num_layers = 2;
  mc.num_heads = 4;
  mc.num_kv_heads = 4;
  mc.head_dim = 8;
  mc.intermediate_size = 128;
  mc.vocab_size = 50;
  mc.max_position_embeddings = 16;
  mc.tie_word_embeddings = true;
  mc.hidden_act = "gelu_new";
  mc.attention_bias = true;  // gpt2 has every bias
  mc.mlp_bias = true;
  return mc;
}

// Collective: rank 0 writes config.json of `mc` and 2000 pseudo-random tokens to `dir`.
inline void write_inputs(const std::filesystem::path& dir, const nn::ModelConfig& mc) {
  if (process_group().rank() == 0) {
    io::write_hf_config(mc, dir / "config.json");
    write_random_tokens(dir / "tokens.bin", mc.vocab_size, 2000, 0x9E3779B97F4A7C15ull);
  }
  process_group().host().barrier();
}

// One field of every line of a metrics.jsonl.
inline std::vector<double> metric_of(const std::filesystem::path& metrics, const char* key) {
  std::vector<double> out;
  std::ifstream in(metrics);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) {
      const nlohmann::json v = nlohmann::json::parse(line).at(key);  // null: not finite
      out.push_back(v.is_null() ? std::nan("") : v.get<double>());
    }
  return out;
}

inline std::string file_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace zt::test
