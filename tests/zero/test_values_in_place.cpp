// Stages 0-2 with their values built in place (see [Note: values built in place] in
// src/zerotrain/zero/shard_init.h): a group's full buffer filled from the seeded source equals
// bitwise the buffer materialize() copies from the initialized model (llama and gpt2 with tied
// embeddings, f32 and bf16, groups of worlds 1, 2 and 4), the model's parameters point into it, and
// engines of stages 0, 1 and 2 built either way hold the same values and report the same memory.
// The trainer's seeded run (built in place) trains bitwise as the same values loaded from a
// checkpoint (the model's values copied in), stages 0 and 2. On a GPU (skipped without one) the
// engines built in place hold the host's copied-in bits. Bad buffers are typed errors.
// Multi-rank: tests/mpi/test_zero_init.cpp.
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
#include "zerotrain/io/hf_config.h"
#include "zerotrain/io/hf_model.h"
#include "zerotrain/train/trainer.h"
#include "zerotrain/zero/shard_init.h"
#include "zerotrain/zero/zero_stage.h"

namespace zt {
namespace {

namespace fs = std::filesystem;

// What a built group holds: its shard's bytes (a view of the full buffer) and every parameter's
// value bytes (views of it too).
struct GroupBytes {
  std::string shard;
  std::vector<std::string> values;
  DType dtype = DType::f32;
  bool operator==(const GroupBytes&) const = default;
};

GroupBytes bytes_of(const zero::ParamGroup& g) {
  GroupBytes out;
  out.shard = test::host_bytes(g.value_shard());
  for (const nn::Parameter* p : g.params()) {
    EXPECT_TRUE(p->value.defined()) << p->name;
    EXPECT_EQ(p->value.shape(), p->shape) << p->name;
    out.values.push_back(test::host_bytes(p->value));
  }
  out.dtype = g.value_dtype();
  return out;
}

TEST(ValuesInPlace, FullBuffersEqualTheModelsCopiedInBitwise) {
  for (nn::Family family : {nn::Family::llama, nn::Family::gpt2})
    for (DType dtype : {DType::f32, DType::bf16})
      for (int world : {1, 2, 4})
        for (int rank = 0; rank < world; ++rank) {
          const nn::ModelConfig mc = test::zero_init_config(family);
          const std::string what =
              str(family_name(family), " ", dtype_name(dtype), " world ", world, " rank ", rank);
          nn::Transformer copied(mc, {.param_dtype = dtype});
          copied.init_random(test::kZeroInitSeed);
          nn::Transformer built(mc, {.param_dtype = dtype, .allocate = false});
          zero::SeededInitSource source(mc, test::kZeroInitSeed);
          for (size_t b = 0; b < copied.blocks().size(); ++b) {
            zero::ParamGroup from_model(b, copied.blocks()[b]->parameters(), world, rank);
            from_model.materialize(true, {});
            zero::ParamGroup in_place(b, built.blocks()[b]->parameters(), world, rank);
            in_place.materialize_full(
                zero::build_full_values(in_place, source, dtype, Device::cpu(), {}));
            EXPECT_EQ(in_place.state(), zero::ParamState::gathered) << what;
            EXPECT_TRUE(in_place.replicated()) << what;
            EXPECT_TRUE(bytes_of(in_place) == bytes_of(from_model)) << what << " block " << b;
            // The values are views of the group's buffer: a write through one shows in the shard.
            nn::Parameter& first = *in_place.params().front();
            if (rank == 0) {
              first.value.flatten().slice(0, 0, 1).fill(7.0);
              EXPECT_EQ(in_place.value_shard().slice(0, 0, 1).to_floats()[0], 7.0f) << what;
            }
          }
        }
}

// Every group's bytes and the engine's memory of a stage built from the model or in place.
struct Engine {
  std::vector<GroupBytes> groups;
  zero::MemoryBytes memory;
  bool model_had_values = false;
};

Engine engine_of(const nn::ModelConfig& mc, DType dtype, int stage, bool in_place,
                 Device device = Device::cpu()) {
  const Stream stream = device.is_cuda() ? Stream::default_for(device) : Stream{};
  nn::Transformer model(
      mc, {.param_dtype = dtype, .device = device, .allocate = !in_place, .allocate_grads = false});
  zero::SeededInitSource source(mc, test::kZeroInitSeed);
  Engine out;
  for (nn::Parameter* p : model.parameters())
    if (p->value.defined()) out.model_had_values = true;
  if (!in_place) model.init_random(test::kZeroInitSeed);
  zero::ZeroOptions o;
  o.config.stage = stage;
  o.initial_values = in_place ? &source : nullptr;
  o.initial_values_dtype = dtype;
  const auto engine =
      zero::make_zero_stage(o, model.blocks(), zero::ZeroContext::one_process(device, stream));
  synchronize(stream);
  for (const auto& g : engine->groups())
    out.groups.push_back(bytes_of(*g));
  out.memory = engine->memory();
  return out;
}

TEST(ValuesInPlace, StagesZeroToTwoBuildTheSameEngine) {
  for (nn::Family family : {nn::Family::llama, nn::Family::gpt2})
    for (DType dtype : {DType::f32, DType::bf16})
      for (int stage : {0, 1, 2}) {
        const nn::ModelConfig mc = test::zero_init_config(family);
        const std::string what = str(family_name(family), " ", dtype_name(dtype), " stage ", stage);
        const Engine copied = engine_of(mc, dtype, stage, false);
        const Engine built = engine_of(mc, dtype, stage, true);
        EXPECT_TRUE(copied.model_had_values) << what;
        EXPECT_FALSE(built.model_had_values) << what;
        ASSERT_EQ(built.groups.size(), copied.groups.size()) << what;
        for (size_t g = 0; g < copied.groups.size(); ++g)
          EXPECT_TRUE(built.groups[g] == copied.groups[g]) << what << " group " << g;
        EXPECT_EQ(built.memory.params, copied.memory.params) << what;
        EXPECT_EQ(built.memory.grads, copied.memory.grads) << what;
        EXPECT_EQ(built.memory.optimizer, copied.memory.optimizer) << what;
      }
}

// On a GPU the values are generated there, into the group buffers: the CPU's copied-in bits.
TEST(ValuesInPlaceCuda, StagesZeroToTwoOnAGpuHoldTheBitsCopiedInOnTheHost) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  for (DType dtype : {DType::f32, DType::bf16})
    for (int stage : {0, 1, 2}) {
      const nn::ModelConfig mc = test::zero_init_config(nn::Family::gpt2);
      const std::string what = str(dtype_name(dtype), " stage ", stage);
      const Engine host = engine_of(mc, dtype, stage, false);
      const Engine gpu = engine_of(mc, dtype, stage, true, Device::cuda(0));
      EXPECT_FALSE(gpu.model_had_values) << what;
      ASSERT_EQ(gpu.groups.size(), host.groups.size()) << what;
      for (size_t g = 0; g < host.groups.size(); ++g)
        EXPECT_TRUE(gpu.groups[g] == host.groups[g]) << what << " group " << g;
      EXPECT_EQ(gpu.memory.params, host.memory.params) << what;
    }
}

// A seeded run builds its values in place; a checkpoint of the same values (written in f32, so
// exactly) goes through the model's values and materialize(). Both train to the same bits.
TEST(ValuesInPlace, TrainerSeededRunMatchesTheSameValuesLoaded) {
  const test::TempDir dir;
  const nn::ModelConfig mc = test::tiny_config(nn::Family::llama);
  constexpr uint64_t kSeed = 5;
  {
    nn::Transformer model(mc, {});
    model.init_random(kSeed);
    io::save_pretrained(model, dir / "weights", DType::f32);
  }
  io::write_hf_config(mc, dir / "config.json");
  test::write_random_tokens(dir / "tokens.bin", mc.vocab_size, 600, 977ull);
  for (int stage : {0, 2}) {
    train::TrainConfig c;
    c.paths.data = dir / "tokens.bin";
    c.steps = 3;
    c.data.micro_batch = 2;
    c.data.seq_len = 8;
    c.data.seed = kSeed;
    c.schedule.lr = 1e-2;
    c.reporting.log_every = 1;
    c.zero.stage = stage;
    const std::string seeded = str("seeded", stage), loaded = str("loaded", stage);
    c.paths.model = dir / "config.json";
    c.paths.out = dir / seeded;
    const train::TrainSummary s = train::train(c);
    c.paths.model = dir / "weights";
    c.paths.out = dir / loaded;
    const train::TrainSummary l = train::train(c);
    const std::vector<double> ref = test::losses_of(dir / loaded / "metrics.jsonl");
    ASSERT_EQ(ref.size(), 3u);
    EXPECT_EQ(test::losses_of(dir / seeded / "metrics.jsonl"), ref) << "stage " << stage;
    EXPECT_TRUE(test::read_bytes(dir / seeded / "model" / "model.safetensors") ==
                test::read_bytes(dir / loaded / "model" / "model.safetensors"))
        << "stage " << stage;
    EXPECT_TRUE(s.zero_init.empty()) << s.zero_init;  // not zero.Init: stage 3 only
    EXPECT_EQ(s.memory_start.params, l.memory_start.params) << "stage " << stage;
    EXPECT_EQ(s.memory_start.grads, l.memory_start.grads) << "stage " << stage;
    EXPECT_EQ(s.memory_start.optimizer, l.memory_start.optimizer) << "stage " << stage;
  }
}

TEST(ValuesInPlace, BadBuffersAreTypedErrors) {
  const nn::ModelConfig mc = test::zero_init_config(nn::Family::llama);
  nn::Transformer deferred(mc, {.allocate = false});
  zero::SeededInitSource source(mc, 1);
  zero::ParamGroup g(1, deferred.blocks()[1]->parameters(), 2, 0);
  test::expect_error<ValueError>(
      [&] { g.materialize_full(Tensor::zeros({g.shard_numel()}, DType::f32)); },
      {"[zero]", "block 1", "full value buffer", std::to_string(g.padded_numel()),
       "f32[" + std::to_string(g.shard_numel()) + "]"});
  test::expect_error<ValueError>(
      [&] { g.materialize_full(Tensor::zeros({g.padded_numel()}, DType::i32)); }, {"i32"});
  test::expect_error<DTypeError>(
      [&] { zero::build_full_values(g, source, DType::i64, Device::cpu(), {}); }, {"i64"});
  g.materialize_full(zero::build_full_values(g, source, DType::f32, Device::cpu(), {}));
  test::expect_error<ValueError>(
      [&] { g.materialize_full(Tensor::zeros({g.padded_numel()}, DType::f32)); },
      {"materialized twice"});
}

}  // namespace
}  // namespace zt
