// zero.Init in one process (see [Note: zero.Init] in src/zerotrain/zero/shard_init.h). For worlds
// 1, 2 and 4, rank by rank (ParamGroups need no communicator to be laid out): the shards built
// directly equal bitwise the shards cut from the full model, for the seeded init and for saved
// checkpoints (one file; shards with an index), llama and gpt2 (tied), f32 and bf16 values (a
// checkpoint stored in the other dtype); a rank reads exactly its slices' bytes, each byte of the
// checkpoint once over the ranks, and no parameter of the model ever gets a full value. Stage 3
// through make_zero_stage and the trainer: zero.Init on and off give the same bits. Bad inputs
// are typed errors. Multi-rank engines: tests/mpi/test_zero_init.cpp.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "io/io_test_util.h"
#include "nn/nn_test_util.h"
#include "support/token_fixture.h"
#include "support/zero_init_fixture.h"
#include "zerotrain/core/error.h"
#include "zerotrain/core/io_error.h"
#include "zerotrain/io/hf_config.h"
#include "zerotrain/train/trainer.h"
#include "zerotrain/zero/sharded_stage.h"
#include "zerotrain/zero/zero_stage.h"

namespace zt {
namespace {

// The engine's context of a one-process CPU run.
zero::ZeroContext one_process() {
  return zero::ZeroContext::one_process(Device::cpu(), {});
}

namespace fs = std::filesystem;

struct Weights {
  const char* name;
  DType stored;
  uint64_t max_shard_bytes;  // small: several files and an index
  DType values;              // the model's: another than stored, so reads convert
};

void expect_same_shards(const nn::ModelConfig& mc, DType dtype, const fs::path& weights,
                        DType stored, const std::string& what) {
  uint64_t total_read = 0;
  int64_t model_elements = 0;
  for (int world : {1, 2, 4}) {
    uint64_t read_over_ranks = 0;
    for (int rank = 0; rank < world; ++rank) {
      const std::vector<std::string> cut = test::cut_shards(mc, dtype, weights, world, rank);
      const test::BuiltShards built = test::built_shards(mc, dtype, weights, world, rank);
      const std::string where =
          what + " world " + std::to_string(world) + " rank " + std::to_string(rank);
      ASSERT_EQ(built.shards.size(), cut.size()) << where;
      for (size_t g = 0; g < cut.size(); ++g)
        EXPECT_TRUE(built.shards[g] == cut[g]) << where << " group " << g;
      EXPECT_TRUE(built.values_stayed_undefined) << where;
      if (world == 1) model_elements = built.shard_elements;
      if (!weights.empty()) {
        // Exactly this rank's elements, as stored: a slice, not the tensors.
        EXPECT_EQ(built.bytes_read,
                  static_cast<uint64_t>(built.shard_elements) * dtype_size(stored))
            << where;
        read_over_ranks += built.bytes_read;
      }
    }
    if (!weights.empty()) {
      if (world == 1) total_read = read_over_ranks;
      EXPECT_EQ(read_over_ranks, total_read) << what << " world " << world;
    }
  }
  if (!weights.empty()) {
    EXPECT_EQ(total_read, static_cast<uint64_t>(model_elements) * dtype_size(stored)) << what;
  }
}

TEST(ZeroShardInit, SeededShardsEqualTheFullInitsShardsBitwise) {
  for (nn::Family family : {nn::Family::llama, nn::Family::gpt2})
    for (DType dtype : {DType::f32, DType::bf16})
      expect_same_shards(test::zero_init_config(family), dtype, {}, dtype,
                         str(family_name(family), " ", dtype_name(dtype), " seeded"));
}

TEST(ZeroShardInit, CheckpointShardsEqualTheFullLoadsShardsReadingOnlyTheSlices) {
  for (nn::Family family : {nn::Family::llama, nn::Family::gpt2})
    for (const Weights& w :
         {Weights{"single_bf16", DType::bf16, io::kDefaultMaxShardBytes, DType::f32},
          Weights{"sharded_f32", DType::f32, 60'000, DType::bf16}}) {
      const test::TempDir dir;
      const nn::ModelConfig mc = test::zero_init_config(family);
      test::write_weights(mc, dir.path(), w.stored, w.max_shard_bytes);
      const bool sharded = fs::exists(dir / io::kWeightsIndexFile);
      EXPECT_EQ(sharded, w.max_shard_bytes < io::kDefaultMaxShardBytes) << w.name;
      if (sharded) {
        EXPECT_GT(io::ShardedReader(dir.path()).files().size(), 3u) << w.name;
      }
      expect_same_shards(mc, w.values, dir.path(), w.stored,
                         str(family_name(family), " ", w.name, " -> ", dtype_name(w.values)));
    }
}

// The shards of a stage-3 engine in one process, with and without zero.Init.
std::vector<std::string> engine_shards(const nn::ModelConfig& mc, DType dtype, bool zero_init) {
  nn::Transformer model(mc, {.param_dtype = dtype, .allocate = !zero_init});
  zero::SeededInitSource source(mc, test::kZeroInitSeed);
  if (!zero_init) model.init_random(test::kZeroInitSeed);
  zero::ZeroOptions o;
  o.config.stage = 3;
  o.initial_values = zero_init ? &source : nullptr;
  o.initial_values_dtype = dtype;
  const auto engine = zero::make_zero_stage(o, model.blocks(), one_process());
  std::vector<std::string> out;
  for (const auto& g : dynamic_cast<const zero::ShardedStage&>(*engine).groups())
    out.push_back(test::host_bytes(g->value_shard()));
  return out;
}

TEST(ZeroShardInit, Stage3EngineBuildsTheSameShardsWithZeroInit) {
  for (DType dtype : {DType::f32, DType::bf16}) {
    const nn::ModelConfig mc = test::zero_init_config(nn::Family::gpt2);
    EXPECT_EQ(engine_shards(mc, dtype, true), engine_shards(mc, dtype, false)) << dtype_name(dtype);
  }
}

TEST(ZeroShardInit, TrainerStage3WithZeroInitFromACheckpointMatchesStage0) {
  const test::TempDir dir;
  const nn::ModelConfig mc = test::tiny_config(nn::Family::llama);
  test::write_weights(mc, dir / "model", DType::f32, 8'000);
  test::write_random_tokens(dir / "tokens.bin", mc.vocab_size, 600, 977ull);
  train::TrainConfig c;
  c.paths.model = dir / "model";
  c.paths.data = dir / "tokens.bin";
  c.steps = 2;
  c.data.micro_batch = 1;
  c.data.seq_len = 8;
  c.schedule.lr = 1e-2;
  c.reporting.log_every = 1;
  c.precision.dtype = DType::bf16;
  c.paths.out = dir / "stage0";
  const train::TrainSummary s0 = train::train(c);
  EXPECT_TRUE(s0.zero_init.empty());
  c.zero.stage = 3;
  c.paths.out = dir / "stage3";
  const train::TrainSummary s3 = train::train(c);
  EXPECT_NE(s3.zero_init.find("safetensors"), std::string::npos) << s3.zero_init;
  c.zero.zero_init = false;
  c.paths.out = dir / "stage3_full";
  EXPECT_TRUE(train::train(c).zero_init.empty());
  const std::vector<double> ref = test::losses_of(dir / "stage0" / "metrics.jsonl");
  ASSERT_EQ(ref.size(), 2u);
  EXPECT_EQ(test::losses_of(dir / "stage3" / "metrics.jsonl"), ref);
  EXPECT_EQ(test::losses_of(dir / "stage3_full" / "metrics.jsonl"), ref);
  EXPECT_TRUE(test::read_bytes(dir / "stage3" / "model" / "model.safetensors") ==
              test::read_bytes(dir / "stage0" / "model" / "model.safetensors"));
}

TEST(ZeroShardInit, BadInputsAreTypedErrors) {
  const nn::ModelConfig mc = test::zero_init_config(nn::Family::llama);
  nn::Transformer deferred(mc, {.allocate = false});
  zero::SeededInitSource source(mc, 1);
  // A shard of the wrong size or dtype, a group materialized twice.
  zero::ParamGroup g(1, deferred.blocks()[1]->parameters(), 2, 0);
  test::expect_error<ValueError>(
      [&] { g.materialize_shard(Tensor::zeros({g.shard_numel() + 1}, DType::f32)); },
      {"[zero]", "block 1", "f32[" + std::to_string(g.shard_numel() + 1) + "]"});
  test::expect_error<ValueError>(
      [&] { g.materialize_shard(Tensor::zeros({g.shard_numel()}, DType::i32)); }, {"i32"});
  g.materialize_shard(zero::build_value_shard(g, source, DType::f32, Device::cpu(), {}));
  test::expect_error<ValueError>(
      [&] { g.materialize_shard(Tensor::zeros({g.shard_numel()}, DType::f32)); },
      {"materialized twice"});
  test::expect_error<DTypeError>(
      [&] { zero::build_value_shard(g, source, DType::i64, Device::cpu(), {}); }, {"i64"});
  // A checkpoint that lacks a tensor fails when the source opens, before any shard is built.
  const test::TempDir dir;
  nn::Transformer other(test::zero_init_config(nn::Family::gpt2), {});
  io::save_pretrained(other, dir.path(), DType::f32);
  test::expect_error<FormatError>(
      [&] { zero::PretrainedSource(mc, deferred.parameters(), dir.path(), nullptr); },
      {"lacks", "model.layers.0.self_attn.q_proj.weight"});
  // A parameter the source was not resolved for.
  zero::PretrainedSource gpt2_source(other.config(), other.parameters(), dir.path(), nullptr);
  nn::Parameter& stranger = *deferred.parameters().front();
  test::expect_error<ValueError>(
      [&] { gpt2_source.fill(stranger, 0, 1, Tensor::zeros({1}, DType::f32), {}); },
      {"[zero_init]", stranger.name});
}

}  // namespace
}  // namespace zt
