// zero.Init under mpirun (2 and 4 ranks), see [Note: zero.Init] in
// src/zerotrain/zero/shard_init.h: on every rank the stage-3 engine built with zero.Init holds
// bitwise the value shards of the engine built from the full model (seeded init; checkpoints in
// one file and split over files with an index; llama and gpt2 with tied embeddings; f32 and bf16),
// the model's parameters never get full values, and each rank reads only its slices of the
// checkpoint (exactly its elements' bytes; each byte once over the ranks). A stage-3 training run
// with zero.Init from a sharded checkpoint gives bitwise stage 0's losses and final weights (the
// seeded-init runs of tests/mpi/test_zero_parity.cpp use zero.Init too: it is stage 3's default).
// Stages 0-2 built from the seeded source hold on every rank the values of rank 0's initialized
// model broadcast ([Note: values built in place]).
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "mpi/mpi_test_env.h"
#include "mpi/training_inputs.h"
#include "support/zero_init_fixture.h"
#include "zerotrain/train/trainer.h"
#include "zerotrain/zero/grad_norm.h"
#include "zerotrain/zero/sharded_stage.h"

namespace zt {
namespace {

namespace fs = std::filesystem;

struct EngineShards {
  std::vector<std::string> shards;  // this rank's, per group
  uint64_t bytes_read = 0;
  int64_t elements = 0;  // this rank's real elements
  size_t groups = 0;
  bool values_undefined = true;
};

// A stage-3 engine over the host communicator, with zero.Init or from the full model.
EngineShards engine_shards(const nn::ModelConfig& mc, DType dtype, const fs::path& weights,
                           bool zero_init) {
  comm::Communicator& comm = test::process_group().host();
  nn::Transformer model(mc, {.param_dtype = dtype, .allocate = !zero_init});
  std::unique_ptr<zero::ShardSource> source;
  zero::PretrainedSource* pretrained = nullptr;
  if (!zero_init) {
    if (weights.empty())
      model.init_random(test::kZeroInitSeed);
    else
      io::load_pretrained(model, weights, {}, nullptr);
  } else if (weights.empty()) {
    source = std::make_unique<zero::SeededInitSource>(mc, test::kZeroInitSeed);
  } else {
    auto p = std::make_unique<zero::PretrainedSource>(mc, model.parameters(), weights, nullptr);
    pretrained = p.get();
    source = std::move(p);
  }
  zero::ZeroOptions o;
  o.config.stage = 3;
  o.initial_values = source.get();
  o.initial_values_dtype = dtype;
  const auto engine =
      zero::make_zero_stage(o, model.blocks(), zero::ZeroContext(comm, Device::cpu(), {}));
  EngineShards out;
  for (const auto& g : dynamic_cast<const zero::ShardedStage&>(*engine).groups()) {
    out.shards.push_back(test::host_bytes(g->value_shard()));
    for (const zero::ShardPiece& piece : g->shard_pieces())
      out.elements += piece.end - piece.begin;
    ++out.groups;
  }
  for (nn::Parameter* p : model.parameters())
    if (p->value.defined()) out.values_undefined = false;
  if (pretrained) out.bytes_read = pretrained->bytes_read();
  return out;
}

struct Case {
  const char* name;
  nn::Family family;
  DType dtype;
  bool pretrained;
  DType stored = DType::f32;
  uint64_t max_shard_bytes = io::kDefaultMaxShardBytes;
};

void check_case(const Case& k) {
  comm::ProcessGroup& pg = test::process_group();
  comm::Communicator& comm = pg.host();
  const int world = comm.size();
  const nn::ModelConfig mc = test::zero_init_config(k.family);
  const fs::path dir = test::shared_temp_dir(std::string("zero_init_") + k.name);
  if (k.pretrained && comm.rank() == 0)
    test::write_weights(mc, dir / "model", k.stored, k.max_shard_bytes);
  comm.barrier();
  const fs::path weights = k.pretrained ? dir / "model" : fs::path();
  const EngineShards full = engine_shards(mc, k.dtype, weights, false);
  const EngineShards built = engine_shards(mc, k.dtype, weights, true);
  ASSERT_EQ(built.shards.size(), full.shards.size()) << k.name;
  for (size_t g = 0; g < full.shards.size(); ++g)
    EXPECT_TRUE(built.shards[g] == full.shards[g])
        << k.name << " rank " << comm.rank() << " group " << g;
  EXPECT_TRUE(built.values_undefined) << k.name;
  if (k.pretrained) {
    const uint64_t size = dtype_size(k.stored);
    EXPECT_EQ(built.bytes_read, static_cast<uint64_t>(built.elements) * size) << k.name;
    // About 1/world of the checkpoint: at most a norm chunk of padding per group more.
    const auto total = static_cast<uint64_t>(mc.num_params()) * size;
    EXPECT_LE(built.bytes_read, total / static_cast<uint64_t>(world) +
                                    built.groups * static_cast<uint64_t>(zero::kNormChunk) * size)
        << k.name << " rank " << comm.rank();
    // Every byte read once over the ranks.
    const std::vector<uint8_t> mine(reinterpret_cast<const uint8_t*>(&built.bytes_read),
                                    reinterpret_cast<const uint8_t*>(&built.bytes_read) + 8);
    std::vector<uint8_t> all(8 * static_cast<size_t>(world));
    comm.all_gather(mine.data(), all.data(), 8, DType::u8, {});
    uint64_t sum = 0;
    for (int r = 0; r < world; ++r) {
      uint64_t v;
      std::memcpy(&v, all.data() + 8 * r, 8);
      sum += v;
    }
    EXPECT_EQ(sum, total) << k.name;
  }
  comm.barrier();
  if (comm.rank() == 0) fs::remove_all(dir);
  comm.barrier();
}

TEST(ZeroInitRanks, SeededShardsEqualTheFullPath) {
  check_case({"seeded_llama_f32", nn::Family::llama, DType::f32, false});
  check_case({"seeded_gpt2_bf16", nn::Family::gpt2, DType::bf16, false});
}

TEST(ZeroInitRanks, CheckpointShardsEqualTheFullPathReadingOnlySlices) {
  check_case({"single_llama", nn::Family::llama, DType::bf16, true, DType::f32});
  check_case({"single_gpt2", nn::Family::gpt2, DType::f32, true, DType::bf16});
  check_case({"sharded_llama", nn::Family::llama, DType::f32, true, DType::bf16, 40'000});
  check_case({"sharded_gpt2", nn::Family::gpt2, DType::bf16, true, DType::f32, 60'000});
}

// Every parameter's value bytes of a stage 0-2 engine, its values built in place on every rank
// ([Note: values built in place]) or rank 0's initialized model broadcast into the groups.
std::vector<std::string> replicated_values(const nn::ModelConfig& mc, DType dtype, int stage,
                                           bool in_place) {
  comm::Communicator& comm = test::process_group().host();
  nn::Transformer model(mc, {.param_dtype = dtype, .allocate = !in_place});
  zero::SeededInitSource source(mc, test::kZeroInitSeed);
  if (!in_place) model.init_random(test::kZeroInitSeed);
  zero::ZeroOptions o;
  o.config.stage = stage;
  o.initial_values = in_place ? &source : nullptr;
  o.initial_values_dtype = dtype;
  const auto engine =
      zero::make_zero_stage(o, model.blocks(), zero::ZeroContext(comm, Device::cpu(), {}));
  engine->check_parameters_identical();
  std::vector<std::string> out;
  for (nn::Parameter* p : model.parameters())
    out.push_back(test::host_bytes(p->value));
  return out;
}

TEST(ZeroInitRanks, StagesZeroToTwoBuildTheFullValuesInPlaceOnEveryRank) {
  for (int stage : {0, 1, 2})
    for (DType dtype : {DType::f32, DType::bf16}) {
      const nn::ModelConfig mc = test::zero_init_config(nn::Family::gpt2);
      EXPECT_TRUE(replicated_values(mc, dtype, stage, true) ==
                  replicated_values(mc, dtype, stage, false))
          << "stage " << stage << " " << dtype_name(dtype) << " rank "
          << test::process_group().host().rank();
    }
}

TEST(ZeroInitRanks, Stage3TrainingFromASplitCheckpointMatchesStage0) {
  comm::Communicator& comm = test::process_group().host();
  const nn::ModelConfig mc = test::tiny_gpt2();
  const fs::path dir = test::shared_temp_dir("zero_init_train");
  test::write_inputs(dir, mc);
  if (comm.rank() == 0) test::write_weights(mc, dir / "model", DType::f32, 8'000);
  comm.barrier();
  std::vector<std::string> zero_init;
  for (int stage : {0, 3}) {
    train::TrainConfig c;
    c.paths.model = dir / "model";
    c.paths.data = dir / "tokens.bin";
    c.steps = 3;
    c.data.micro_batch = 1;
    c.data.seq_len = 8;
    c.schedule.lr = 1e-2;
    c.reporting.log_every = 1;
    c.precision.dtype = DType::bf16;
    c.comm = &comm;
    c.zero.stage = stage;
    c.zero.param_persistence_threshold = 0;
    c.paths.out = dir / ("stage" + std::to_string(stage));
    zero_init.push_back(train::train(c).zero_init);
  }
  EXPECT_TRUE(zero_init[0].empty());
  EXPECT_NE(zero_init[1].find("safetensors"), std::string::npos) << zero_init[1];
  comm.barrier();
  if (comm.rank() == 0) {
    EXPECT_TRUE(fs::exists(dir / "model" / io::kWeightsIndexFile));
    const std::vector<double> ref = test::metric_of(dir / "stage0" / "metrics.jsonl", "loss");
    ASSERT_EQ(ref.size(), 3u);
    EXPECT_EQ(test::metric_of(dir / "stage3" / "metrics.jsonl", "loss"), ref);
    EXPECT_TRUE(test::file_bytes(dir / "stage3" / "model" / "model.safetensors") ==
                test::file_bytes(dir / "stage0" / "model" / "model.safetensors"));
    fs::remove_all(dir);
  }
  comm.barrier();
}

}  // namespace
}  // namespace zt
