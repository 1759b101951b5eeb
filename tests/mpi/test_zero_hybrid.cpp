// Hybrid sharding (zero_optimization.zero_hpz_partition_size, [Note: hybrid sharding] in
// src/zerotrain/zero/shard_comms.h) under mpirun: on 4 ranks, stage 3 sharded within groups of 2
// and replicated across the 2 groups gives per-step losses and gradient norms, final weights and
// checkpoint tensors bitwise equal to plain stage 3 over the 4 ranks (the second group writes no
// tensors into the checkpoint) (bf16 with accumulation,
// a tied gpt2 with activation checkpointing and persistent blocks, bf16 gradients summed in bf16,
// Lamb, optimizer offload), and so do stages 1 and 2; group sizes 1 and W are plain ZeRO; a
// hybrid checkpoint resumes into plain stage 3 and a plain one into hybrid stage 3, bitwise. The
// hybrid cases need a world with a divisor other than 1 and W (4 ranks; skipped on 2).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "mpi/mpi_test_env.h"
#include "mpi/training_inputs.h"
#include "support/checkpoint_tensors.h"
#include "zerotrain/checkpoint/checkpoint_store.h"
#include "zerotrain/core/error.h"
#include "zerotrain/train/trainer.h"

namespace zt {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kSteps = 6;

struct HybridCase {
  const char* name;
  nn::ModelConfig model;
  DType dtype;
  int64_t grad_accum;
  bool activation_checkpointing = false;
  int64_t persistence_threshold = 0;
  DType grad_accum_dtype = DType::f32;
  DType comm_dtype = DType::f32;
  std::optional<optim::OptimizerConfig> rule = {};
  zero::OffloadPolicy offload = {};
};

comm::Communicator& world() {
  return test::process_group().host();
}

train::TrainConfig config_for(const fs::path& dir, const HybridCase& k, int stage,
                              int64_t group_size, const std::string& out) {
  train::TrainConfig c;
  c.paths.model = dir / "config.json";
  c.paths.data = dir / "tokens.bin";
  c.paths.out = dir / out;
  c.steps = kSteps;
  c.data.micro_batch = 1;
  c.data.seq_len = 8;
  c.data.grad_accum = k.grad_accum;
  c.data.seed = 5;
  c.schedule.lr = 1e-2;
  c.schedule.warmup_steps = 2;
  c.optimizer.weight_decay = 0.1;
  if (k.rule) c.optimizer = *k.rule;
  c.clip = 0.05;  // every step clips: the norm reaches the weights
  c.reporting.log_every = 1;
  c.reporting.checkpoint_weights = true;
  c.precision.dtype = k.dtype;
  c.precision.grad_accum_dtype = k.grad_accum_dtype;
  c.precision.comm_dtype = k.comm_dtype;
  c.activation_checkpointing = k.activation_checkpointing;
  c.comm = &world();
  c.zero.stage = stage;
  c.zero.zero_hpz_partition_size = group_size;
  c.zero.param_persistence_threshold = k.persistence_threshold;
  c.zero.offload = k.offload;
  c.check_params_every = 3;  // every rank's values agree, replicas included
  return c;
}

// Rank 0: `out`'s losses, norms, final weights, checkpoint weights and tensors equal `ref`'s.
void expect_same_run(const fs::path& ref, const fs::path& out, const std::string& what) {
  const std::vector<double> loss0 = test::metric_of(ref / "metrics.jsonl", "loss");
  const std::vector<double> norm0 = test::metric_of(ref / "metrics.jsonl", "grad_norm");
  const std::vector<double> loss = test::metric_of(out / "metrics.jsonl", "loss");
  const std::vector<double> norm = test::metric_of(out / "metrics.jsonl", "grad_norm");
  ASSERT_EQ(loss0.size(), static_cast<size_t>(kSteps)) << what;
  ASSERT_EQ(loss.size(), loss0.size()) << what;
  for (size_t i = 0; i < loss0.size(); ++i) {
    EXPECT_EQ(loss[i], loss0[i]) << what << " step " << i + 1;
    EXPECT_EQ(norm[i], norm0[i]) << what << " step " << i + 1;
    EXPECT_GT(norm0[i], 0.05) << what << ": step " << i + 1 << " did not clip";
  }
  const std::string model0 = test::file_bytes(ref / "model" / "model.safetensors");
  ASSERT_FALSE(model0.empty());
  EXPECT_TRUE(test::file_bytes(out / "model" / "model.safetensors") == model0)
      << what << ": final weights differ";
  EXPECT_TRUE(test::file_bytes(checkpoint::resolve_checkpoint(out) / "model" /
                               "model.safetensors") == model0)
      << what << ": the checkpoint's weights differ";
  const auto tensors0 = test::checkpoint_tensor_bytes(ref);
  ASSERT_FALSE(tensors0.empty());
  EXPECT_TRUE(test::checkpoint_tensor_bytes(out) == tensors0)
      << what << ": the checkpoint's tensors differ";
}

// The checkpoint's tensors come from the first group: the second group's ranks (2, 3) are
// replicas, whose files hold no tensor (a safetensors file with an empty header).
void expect_replicas_wrote_nothing(const fs::path& out) {
  const fs::path ckpt = checkpoint::resolve_checkpoint(out);
  for (int r = 0; r < 4; ++r) {
    const fs::path file = ckpt / str("rank-0000", r, "-of-00004.safetensors");
    ASSERT_TRUE(fs::exists(file)) << file;
    if (r < 2)
      EXPECT_GT(fs::file_size(file), 1000u) << file;
    else
      EXPECT_LT(fs::file_size(file), 64u) << file << " of a replica holds tensors";
  }
}

bool has_hybrid_divisor() {
  return world().size() == 4;
}

// Stages 1-3 (as given) with groups of 2 against the same stage over the world.
void run_hybrid_parity(const HybridCase& k, std::vector<int> stages = {3}) {
  const fs::path dir = test::shared_temp_dir(std::string("hybrid_") + k.name);
  test::write_inputs(dir, k.model);
  for (int stage : stages) {
    const std::string plain = "plain" + std::to_string(stage);
    const std::string hybrid = "hybrid" + std::to_string(stage);
    EXPECT_EQ(train::train(config_for(dir, k, stage, 1, plain)).steps, kSteps);
    EXPECT_EQ(train::train(config_for(dir, k, stage, 2, hybrid)).steps, kSteps);
    world().barrier();
    if (world().rank() == 0) {
      expect_same_run(dir / plain, dir / hybrid, str(k.name, " stage ", stage, " in groups of 2"));
      expect_replicas_wrote_nothing(dir / hybrid);
    }
  }
  world().barrier();
  if (world().rank() == 0) fs::remove_all(dir);
  world().barrier();
}

TEST(ZeroHybrid, Stage3LlamaBf16Accumulation2) {
  if (!has_hybrid_divisor()) GTEST_SKIP() << "needs 4 ranks";
  run_hybrid_parity({"llama_bf16_a2", test::tiny_llama(), DType::bf16, 2});
}

TEST(ZeroHybrid, Stage3Gpt2TiedF32CheckpointedPersistent) {
  if (!has_hybrid_divisor()) GTEST_SKIP() << "needs 4 ranks";
  HybridCase k{"gpt2_f32_ac", test::tiny_gpt2(), DType::f32, 1};
  k.activation_checkpointing = true;
  k.persistence_threshold = 2000;
  run_hybrid_parity(k);
}

TEST(ZeroHybrid, Stage3Bf16GradientsSummedInBf16) {
  if (!has_hybrid_divisor()) GTEST_SKIP() << "needs 4 ranks";
  HybridCase k{"llama_bf16_comm_bf16", test::tiny_llama(), DType::bf16, 2};
  k.grad_accum_dtype = k.comm_dtype = DType::bf16;
  run_hybrid_parity(k);
}

TEST(ZeroHybrid, Stages1And2LlamaBf16Accumulation2) {
  if (!has_hybrid_divisor()) GTEST_SKIP() << "needs 4 ranks";
  run_hybrid_parity({"llama_bf16_s12", test::tiny_llama(), DType::bf16, 2}, {1, 2});
}

// Lamb's per-parameter norms add over the shard group, whose members hold the whole model.
TEST(ZeroHybrid, Stage3Lamb) {
  if (!has_hybrid_divisor()) GTEST_SKIP() << "needs 4 ranks";
  HybridCase k{"llama_lamb", test::tiny_llama(), DType::bf16, 1};
  optim::OptimizerConfig lamb;
  lamb.kind = optim::OptimizerKind::lamb;
  lamb.weight_decay = 0.1;
  k.rule = lamb;
  run_hybrid_parity(k);
}

TEST(ZeroHybrid, Stage3OffloadOptimizer) {
  if (!has_hybrid_divisor()) GTEST_SKIP() << "needs 4 ranks";
  HybridCase k{"llama_offload", test::tiny_llama(), DType::bf16, 2};
  k.offload.optimizer.device = zero::OffloadDevice::cpu;
  run_hybrid_parity(k);
}

// 1 and the world size shard over the whole world: the plain path, bitwise.
TEST(ZeroHybrid, GroupsOfOneAndOfTheWorldArePlainZero) {
  const HybridCase k{"degenerate", test::tiny_llama(), DType::bf16, 1};
  const fs::path dir = test::shared_temp_dir("hybrid_degenerate");
  test::write_inputs(dir, k.model);
  const int w = world().size();
  train::train(config_for(dir, k, 3, 1, "one"));
  train::train(config_for(dir, k, 3, w, "world"));
  world().barrier();
  if (world().rank() == 0) {
    expect_same_run(dir / "one", dir / "world", "groups of the world size");
    fs::remove_all(dir);
  }
  world().barrier();
}

// A size below the world that does not divide it (3 of 4; 0 on 2 ranks) is refused on every
// rank, before any collective. (One of the world size or more is the world: plain ZeRO.)
TEST(ZeroHybrid, GroupSizeNotDividingTheWorldIsRefused) {
  const HybridCase k{"refused", test::tiny_llama(), DType::f32, 1};
  const fs::path dir = test::shared_temp_dir("hybrid_refused");
  test::write_inputs(dir, k.model);
  const int bad = world().size() > 3 ? world().size() - 1 : 0;
  try {
    train::train(config_for(dir, k, 3, bad, "refused"));
    ADD_FAILURE() << "zero_hpz_partition_size " << bad << " was accepted";
  } catch (const ValueError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("zero_optimization.zero_hpz_partition_size"), std::string::npos) << m;
    EXPECT_NE(m.find("world size " + std::to_string(world().size())), std::string::npos) << m;
    EXPECT_NE(m.find("got " + std::to_string(bad)), std::string::npos) << m;
  }
  world().barrier();
  if (world().rank() == 0) fs::remove_all(dir);
  world().barrier();
}

struct Interrupted : std::runtime_error {
  Interrupted() : std::runtime_error("interrupted") {}
};

// A run of (stage, group size) interrupted after its step-3 checkpoint and resumed as plain or
// hybrid stage 3 ends where the uninterrupted plain stage 3 run ends.
void run_resume(int first_stage, int64_t first_group, int64_t second_group, const char* name) {
  const HybridCase k{name, test::tiny_llama(), DType::bf16, 2};
  const fs::path dir = test::shared_temp_dir(std::string("hybrid_resume_") + name);
  test::write_inputs(dir, k.model);
  train::train(config_for(dir, k, 3, 1, "reference"));
  train::TrainConfig first = config_for(dir, k, first_stage, first_group, "first");
  first.reporting.save_every = 3;
  train::TrainCallbacks stop;
  stop.on_step = [](int64_t done, int64_t, double) {
    if (done == 4) throw Interrupted();
  };
  EXPECT_THROW(train::train(first, stop), Interrupted);
  world().barrier();
  train::TrainConfig second = config_for(dir, k, 3, second_group, "resumed");
  second.paths.resume = dir / "first";
  EXPECT_EQ(train::train(second).steps, kSteps - 3);
  world().barrier();
  if (world().rank() == 0) {
    const std::vector<double> ref = test::metric_of(dir / "reference" / "metrics.jsonl", "loss");
    const std::vector<double> resumed = test::metric_of(dir / "resumed" / "metrics.jsonl", "loss");
    ASSERT_EQ(resumed.size(), static_cast<size_t>(kSteps - 3)) << name;
    for (size_t i = 0; i < resumed.size(); ++i)
      EXPECT_EQ(resumed[i], ref[i + 3]) << name << " step " << i + 4;
    EXPECT_TRUE(test::file_bytes(dir / "resumed" / "model" / "model.safetensors") ==
                test::file_bytes(dir / "reference" / "model" / "model.safetensors"))
        << name;
    EXPECT_TRUE(test::checkpoint_tensor_bytes(dir / "resumed") ==
                test::checkpoint_tensor_bytes(dir / "reference"))
        << name;
    fs::remove_all(dir);
  }
  world().barrier();
}

TEST(ZeroHybrid, HybridCheckpointResumesAsPlainStage3) {
  if (!has_hybrid_divisor()) GTEST_SKIP() << "needs 4 ranks";
  run_resume(3, 2, 1, "hybrid_to_plain");
}

TEST(ZeroHybrid, PlainStage2CheckpointResumesAsHybridStage3) {
  if (!has_hybrid_divisor()) GTEST_SKIP() << "needs 4 ranks";
  run_resume(2, 1, 2, "plain_to_hybrid");
}

}  // namespace
}  // namespace zt
