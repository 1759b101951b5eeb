// Helpers of the zero.Init tests (tests/zero/test_shard_init.cpp, tests/mpi/test_zero_init.cpp):
// a model big enough that every rank of 4 owns part of most blocks, a saved checkpoint of it, and
// the value shards of one rank built both ways: the full model cut by ParamGroup::materialize
// (the path without zero.Init) and zero.Init's build_value_shard; the losses of a run's
// metrics.jsonl (the trainer tests of test_shard_init.cpp and test_values_in_place.cpp).
// Header-only: both test binaries use it.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "zerotrain/io/hf_model.h"
#include "zerotrain/nn/transformer.h"
#include "zerotrain/zero/param_group.h"
#include "zerotrain/zero/shard_init.h"

namespace zt::test {

inline constexpr uint64_t kZeroInitSeed = 21;

// The "loss" of every line of a metrics.jsonl, in order.
inline std::vector<double> losses_of(const std::filesystem::path& metrics) {
  std::vector<double> out;
  std::ifstream in(metrics);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(nlohmann::json::parse(line).at("loss").get<double>());
  return out;
}  // the seeded init; checkpoints use another seed

// vocab 512, hidden 64, intermediate 128, 2 layers: blocks of 33k-37k elements (several norm
// chunks of 4096), gpt2 with tied embeddings.
inline nn::ModelConfig zero_init_config(nn::Family family) {
  nn::ModelConfig c;
  c.family = family;
  c.vocab_size = 512;
  c.hidden_size = 64;
  c.intermediate_size = 128;
  c.num_layers = 2;
  c.num_heads = 4;
  c.num_kv_heads = family == nn::Family::gpt2 ? 4 : 2;
  c.head_dim = 16;
  c.max_position_embeddings = 32;
  if (family == nn::Family::gpt2) {
    c.tie_word_embeddings = true;
    c.hidden_act = "gelu_new";
    c.attention_bias = true;
    c.mlp_bias = true;
  }
  return c;
}

// A checkpoint of `mc` (seeded init 99) in `dir`, stored as `stored`; past max_shard_bytes the
// tensors are split over several files with an index.
inline void write_weights(const nn::ModelConfig& mc, const std::filesystem::path& dir, DType stored,
                          uint64_t max_shard_bytes = io::kDefaultMaxShardBytes) {
  nn::Transformer model(mc, {});
  model.init_random(99);
  io::save_pretrained(model, dir, stored, max_shard_bytes);
}

inline std::string host_bytes(const Tensor& t) {
  const Tensor h = t.to(Device::cpu());
  return {static_cast<const char*>(h.data()), h.nbytes()};
}

// The shards (bytes per block group, in block order) of the path without zero.Init: the full
// model initialized (`weights` empty: seeded init) or loaded, then cut.
inline std::vector<std::string> cut_shards(const nn::ModelConfig& mc, DType dtype,
                                           const std::filesystem::path& weights, int world,
                                           int rank) {
  nn::Transformer model(mc, {.param_dtype = dtype});
  if (weights.empty())
    model.init_random(kZeroInitSeed);
  else
    io::load_pretrained(model, weights, {}, nullptr);
  std::vector<std::string> out;
  for (size_t b = 0; b < model.blocks().size(); ++b) {
    std::vector<nn::Parameter*> ps = model.blocks()[b]->parameters();
    if (ps.empty()) continue;
    zero::ParamGroup g(b, ps, world, rank);
    g.materialize(false, {});
    out.push_back(host_bytes(g.value_shard()));
  }
  return out;
}

struct BuiltShards {
  std::vector<std::string> shards;  // bytes per block group
  uint64_t bytes_read = 0;          // checkpoint bytes read (pretrained source)
  int64_t shard_elements = 0;       // this rank's elements of real parameters (no padding)
  bool values_stayed_undefined = true;
};

// The same shards through zero.Init: a model without values, every group's shard built alone.
inline BuiltShards built_shards(const nn::ModelConfig& mc, DType dtype,
                                const std::filesystem::path& weights, int world, int rank) {
  nn::Transformer model(mc, {.param_dtype = dtype, .allocate = false});
  std::unique_ptr<zero::ShardSource> source;
  zero::PretrainedSource* pretrained = nullptr;
  if (weights.empty()) {
    source = std::make_unique<zero::SeededInitSource>(mc, kZeroInitSeed);
  } else {
    auto p = std::make_unique<zero::PretrainedSource>(mc, model.parameters(), weights, nullptr);
    pretrained = p.get();
    source = std::move(p);
  }
  BuiltShards out;
  for (size_t b = 0; b < model.blocks().size(); ++b) {
    std::vector<nn::Parameter*> ps = model.blocks()[b]->parameters();
    if (ps.empty()) continue;
    zero::ParamGroup g(b, ps, world, rank);
    g.materialize_shard(zero::build_value_shard(g, *source, dtype, Device::cpu(), {}));
    EXPECT_EQ(g.value_dtype(), dtype);
    out.shards.push_back(host_bytes(g.value_shard()));
    for (const zero::ShardPiece& piece : g.shard_pieces())
      out.shard_elements += piece.end - piece.begin;
  }
  for (nn::Parameter* p : model.parameters())
    if (p->value.defined()) out.values_stayed_undefined = false;
  if (pretrained) out.bytes_read = pretrained->bytes_read();
  return out;
}

}  // namespace zt::test
