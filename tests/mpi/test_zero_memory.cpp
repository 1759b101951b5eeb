// What each ZeRO stage holds per rank under mpirun (2 and 4 ranks), from the trainer's summary
// after the first step (zero::ZeroStage::memory): stage 1 holds less optimizer state than stage 0,
// stage 2 fewer gradient bytes than stage 1, stage 3 fewer value bytes than stage 2, and the
// sharded optimizer state shrinks with the world size as 1/W up to shard padding. A model with
// 64-wide layers, so that the padding of shards to whole norm chunks does not dominate. Each
// rank's memory report (train/memory_report.h) adds up to its allocator's peak and holds the
// engine's model states.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "mpi/mpi_test_env.h"
#include "mpi/training_inputs.h"
#include "zerotrain/train/trainer.h"

namespace zt {
namespace {

namespace fs = std::filesystem;

TEST(ZeroMemory, EachStageHoldsLessThanTheOneBefore) {
  comm::Communicator& comm = test::process_group().host();
  const int world = comm.size();
  const fs::path dir = test::shared_temp_dir("zero_memory");
  nn::ModelConfig mc = test::tiny_llama();
  mc.hidden_size = 64;
  mc.head_dim = 16;
  mc.intermediate_size = 256;
  test::write_inputs(dir, mc);
  train::TrainSummary s[4];
  for (int stage = 0; stage <= 3; ++stage) {
    train::TrainConfig c;
    c.paths.model = dir / "config.json";
    c.paths.data = dir / "tokens.bin";
    c.steps = 1;
    c.data.micro_batch = 1;
    c.data.seq_len = 8;
    c.precision.dtype = DType::bf16;
    c.comm = &comm;
    c.zero.stage = stage;
    c.zero.param_persistence_threshold = 0;
    c.paths.out = dir / ("stage" + std::to_string(stage));
    s[stage] = train::train(c);
    EXPECT_EQ(s[stage].zero_stage, stage);
    // The memory report ([Note: memory report]): this rank's categories add up to its
    // allocator's peak, and its model states are the engine's.
    const train::MemoryReport& peak = s[stage].memory_peak;
    EXPECT_NEAR(static_cast<double>(peak.total()), s[stage].peak_mem_gib * 1073741824.0, 1.0);
    EXPECT_EQ(peak.optimizer, s[stage].optimizer_bytes);
    EXPECT_GT(peak.activations, 0);
    if (stage < 3) {
      EXPECT_EQ(s[stage].memory_start.params, s[stage].param_bytes);
      EXPECT_EQ(peak.params, s[stage].param_bytes);
    } else {
      EXPECT_GT(peak.params, s[stage].param_bytes);  // gathered blocks in flight at the peak
    }
  }
  // Stage 0: bf16 values, f32 gradients, f32 master + two moments per parameter.
  const int64_t params = mc.num_params();
  EXPECT_EQ(s[0].param_bytes, 2 * params);
  EXPECT_EQ(s[0].grad_bytes, 4 * params);
  EXPECT_EQ(s[0].optimizer_bytes, 12 * params);
  EXPECT_LT(s[1].optimizer_bytes, s[0].optimizer_bytes);
  EXPECT_LE(s[1].optimizer_bytes, 12 * params / world + 12 * 4 * 4096);  // + padding: 4 groups
  EXPECT_EQ(s[2].optimizer_bytes, s[1].optimizer_bytes);
  EXPECT_LT(s[2].grad_bytes, s[1].grad_bytes);
  EXPECT_EQ(s[3].grad_bytes, s[2].grad_bytes);
  EXPECT_LT(s[3].param_bytes, s[2].param_bytes);
  EXPECT_EQ(s[3].param_bytes, s[2].param_bytes / world);  // only the value shards stay
  comm.barrier();
  if (comm.rank() == 0) fs::remove_all(dir);
  comm.barrier();
}

}  // namespace
}  // namespace zt
