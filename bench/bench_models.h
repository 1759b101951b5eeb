// The model shapes the training benchmarks build by name (train_bench --model): the Llama shapes of
// ../shared/bench/fsdp2_peer.py (1b, 3b, 8b: untied embeddings, vocab 128256), a ladder of
// Llama shapes between them for the largest-model search of an offload run (0.7b ... 7b, named by
// their parameter count), GPT-2 XL (the seed's offload case) and two tiny shapes for CPU smoke
// runs. Used by bench/train_bench.cpp; the smoke test is ctest train_bench_offload_smoke.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "zerotrain/core/error.h"
#include "zerotrain/nn/model_config.h"

namespace zt::bench {

// hidden, layers, heads, kv heads, intermediate, vocab (head_dim = hidden / heads).
inline const std::map<std::string, std::array<int64_t, 6>>& llama_shapes() {
  static const std::map<std::string, std::array<int64_t, 6>> shapes = {
      {"micro", {64, 2, 4, 2, 128, 256}},        {"tiny", {512, 8, 8, 8, 1536, 32000}},
      {"0.7b", {1536, 12, 12, 4, 4096, 128256}}, {"1.1b", {1536, 20, 12, 4, 6144, 128256}},
      {"1b", {2048, 16, 32, 8, 8192, 128256}},   {"3b", {3072, 28, 24, 8, 8192, 128256}},
      {"5b", {4096, 20, 32, 8, 14336, 128256}},  {"6b", {4096, 24, 32, 8, 14336, 128256}},
      {"7b", {4096, 28, 32, 8, 14336, 128256}},  {"8b", {4096, 32, 32, 8, 14336, 128256}},
  };
  return shapes;
}

// GPT-2 shapes: hidden, layers, heads, vocab, n_positions (intermediate 4 x hidden, tied).
inline const std::map<std::string, std::array<int64_t, 5>>& gpt2_shapes() {
  static const std::map<std::string, std::array<int64_t, 5>> shapes = {
      {"gpt2-micro", {64, 2, 4, 256, 256}},
      {"gpt2-xl", {1600, 48, 25, 50257, 1024}},
  };
  return shapes;
}

inline std::vector<std::string> bench_model_names() {
  std::vector<std::string> names;
  for (const auto& [name, shape] : llama_shapes())
    names.push_back(name);
  for (const auto& [name, shape] : gpt2_shapes())
    names.push_back(name);
  return names;
}

// The config of shape `name` for sequences of `seq` tokens. Throws ValueError for an unknown name
// or a GPT-2 sequence beyond its n_positions.
inline nn::ModelConfig bench_model(const std::string& name, int64_t seq) {
  nn::ModelConfig mc;
  if (const auto it = llama_shapes().find(name); it != llama_shapes().end()) {
    const auto [h, layers, heads, kv, inter, vocab] = it->second;
    mc.family = nn::Family::llama;
    mc.hidden_size = h;
    mc.num_layers = layers;
    mc.num_heads = heads;
    mc.num_kv_heads = kv;
    mc.head_dim = h / heads;
    mc.intermediate_size = inter;
    mc.vocab_size = vocab;
    mc.max_position_embeddings = seq;
    mc.rope_theta = 500000;
  } else if (const auto g = gpt2_shapes().find(name); g != gpt2_shapes().end()) {
    const auto [h, layers, heads, vocab, positions] = g->second;
    if (seq > positions)
      throw ValueError("train_bench",
                       str("--seq ", seq, " exceeds ", name, "'s n_positions ", positions));
    mc.family = nn::Family::gpt2;
    mc.hidden_size = h;
    mc.num_layers = layers;
    mc.num_heads = heads;
    mc.num_kv_heads = heads;
    mc.head_dim = h / heads;
    mc.intermediate_size = 4 * h;
    mc.vocab_size = vocab;
    mc.max_position_embeddings = positions;
    mc.tie_word_embeddings = true;
    mc.hidden_act = "gelu_new";
  } else {
    throw ValueError("train_bench", str("unknown --model ", name));
  }
  mc.validate();
  return mc;
}

}  // namespace zt::bench
