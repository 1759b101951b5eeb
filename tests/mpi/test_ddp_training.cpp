// ZeRO stage 0 (DDP) on the CPU under mpirun (2 and 4 ranks) against one process with the same
// global batch, 20 steps of a tiny llama:
//  - micro-batch 1 per rank, no accumulation, against one process accumulating `world`
//    micro-batches of 1: the same rows in the same order, summed in the same order (the MPI
//    backend adds the ranks' gradients in rank order, [Note: deterministic reductions]), so the
//    final weights are bitwise equal and the losses equal to 1e-12 (the reported loss is the sum of
//    the ranks' shares of the global mean, added in another order than the one process adds its
//    micro-batches');
//  - micro-batch 2 with 2 accumulation steps, against one process with micro-batch 2 x world: the
//    same rows, but each rank's micro-batch is a separate GEMM and softmax, so the sums are
//    grouped differently; losses agree to 1e-6 relative in f32 and 5e-3 in bf16.
// Every rank's parameters are compared by checksum every 5 steps (check_params_every).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mpi/mpi_test_env.h"
#include "mpi/training_inputs.h"
#include "zerotrain/data/token_file.h"
#include "zerotrain/io/hf_config.h"
#include "zerotrain/train/trainer.h"

namespace zt {
namespace {

namespace fs = std::filesystem;

using test::file_bytes;
using test::shared_temp_dir;

void write_inputs(const fs::path& dir) {
  test::write_inputs(dir, test::tiny_llama());
}

train::TrainConfig base_config(const fs::path& dir) {
  train::TrainConfig c;
  c.paths.model = dir / "config.json";
  c.paths.data = dir / "tokens.bin";
  c.steps = 20;
  c.data.seq_len = 8;
  c.schedule.lr = 1e-2;
  c.schedule.warmup_steps = 2;
  c.schedule.decay = "cosine";
  c.optimizer.weight_decay = 0.1;
  c.clip = 0.5;  // small enough to clip, so the global norm is exercised
  c.reporting.log_every = 1;
  c.data.seed = 11;
  return c;
}

std::vector<double> losses_of(const fs::path& metrics) {
  return test::metric_of(metrics, "loss");
}

struct Case {
  const char* name;
  DType dtype;
  int64_t micro_batch, grad_accum;
  bool bitwise;
  double tolerance;
};

void run_case(const Case& k) {
  comm::ProcessGroup& pg = test::process_group();
  comm::Communicator& comm = pg.host();
  const int world = comm.size();
  const fs::path dir = shared_temp_dir(k.name);
  write_inputs(dir);
  train::TrainConfig ddp = base_config(dir);
  ddp.precision.dtype = k.dtype;
  ddp.data.micro_batch = k.micro_batch;
  ddp.data.grad_accum = k.grad_accum;
  ddp.comm = &comm;
  ddp.check_params_every = 5;
  ddp.zero.reduce_bucket_size = 3000;  // several buckets
  ddp.paths.out = dir / "ddp";
  const train::TrainSummary s = train::train(ddp);
  EXPECT_EQ(s.steps, 20);
  comm.barrier();
  if (pg.rank() != 0) {
    comm.barrier();  // rank 0 runs the one-process reference meanwhile
    return;
  }
  train::TrainConfig one = base_config(dir);
  one.precision.dtype = k.dtype;
  one.paths.out = dir / "one";
  if (k.bitwise) {  // the same micro-batches, accumulated in one process
    one.data.micro_batch = k.micro_batch;
    one.data.grad_accum = k.grad_accum * world;
  } else {  // the same rows per step in one micro-batch per accumulation step
    one.data.micro_batch = k.micro_batch * world;
    one.data.grad_accum = k.grad_accum;
  }
  train::train(one);
  const std::vector<double> a = losses_of(dir / "ddp" / "metrics.jsonl");
  const std::vector<double> b = losses_of(dir / "one" / "metrics.jsonl");
  ASSERT_EQ(a.size(), 20u);
  ASSERT_EQ(b.size(), 20u);
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_NEAR(a[i], b[i], k.tolerance * std::abs(b[i])) << k.name << " step " << i + 1;
  if (k.bitwise) {
    EXPECT_EQ(file_bytes(dir / "ddp" / "model" / "model.safetensors"),
              file_bytes(dir / "one" / "model" / "model.safetensors"))
        << k.name << ": final weights differ";
  }
  fs::remove_all(dir);
  comm.barrier();
}

TEST(DdpTraining, RankOrderSumIsBitwiseTheOneProcessAccumulation) {
  run_case({"bitwise_f32", DType::f32, 1, 1, true, 1e-12});
}

TEST(DdpTraining, AccumulationMatchesOneProcessWithTheGlobalBatchF32) {
  run_case({"accum_f32", DType::f32, 2, 2, false, 1e-6});
}

TEST(DdpTraining, AccumulationMatchesOneProcessWithTheGlobalBatchBf16) {
  run_case({"accum_bf16", DType::bf16, 2, 2, false, 5e-3});
}

}  // namespace
}  // namespace zt
