// Out of memory as one line (train/out_of_memory.h) on the CPU with the host allocator's cap: the
// cap itself, the message of a run that does not fit (the failed allocation, what was in use and
// free, the estimated need, a fitting setup as flags) at setup and in a step, no model or
// checkpoint left behind, and the advised setup then running under the same cap. The CLI's exit
// code is checked by the ctest train_out_of_memory (tests/CMakeLists.txt).
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <string>

#include "io/io_test_util.h"
#include "support/test_util.h"
#include "train/train_test_util.h"
#include "zerotrain/core/allocator.h"
#include "zerotrain/core/error.h"
#include "zerotrain/estimate/peak_estimate.h"
#include "zerotrain/estimate/recommend.h"
#include "zerotrain/train/out_of_memory.h"
#include "zerotrain/train/trainer.h"

namespace zt {
namespace {

namespace fs = std::filesystem;

// Caps the host allocator for one scope.
class HostCap {
 public:
  explicit HostCap(size_t bytes) { set_cpu_memory_cap(bytes); }
  ~HostCap() { set_cpu_memory_cap(0); }
  HostCap(const HostCap&) = delete;
  HostCap& operator=(const HostCap&) = delete;
};

train::TrainConfig config_in(const test::TempDir& dir, const std::string& name) {
  train::TrainConfig c = test::tiny_train_config(dir.path(), DType::f32);
  // Sequences of 32 need 32 positions (RoPE: the weights, losses and memory do not depend on it).
  nn::ModelConfig mc = test::tiny_config(nn::Family::llama);
  mc.max_position_embeddings = 32;
  io::write_hf_config(mc, c.paths.model);
  c.paths.out = dir / name;
  c.steps = 2;
  c.data.grad_accum = 1;
  c.data.micro_batch = 8;
  c.data.seq_len = 32;
  return c;
}

std::string oom_message(const train::TrainConfig& c) {
  try {
    train::train(c);
  } catch (const OutOfMemoryError& e) {
    return e.what();
  }
  ADD_FAILURE() << "the run did not run out of memory";
  return {};
}

TEST(HostMemoryCap, RefusesWhatWouldPassItAndReportsIt) {
  Allocator& a = cpu_allocator();
  const size_t in_use = a.stats().allocated;
  HostCap cap(in_use + (1 << 20));
  EXPECT_EQ(a.stats().cap, in_use + (1 << 20));
  void* fits = a.allocate(512 << 10, Stream{});
  try {
    a.allocate(1 << 20, Stream{});
    ADD_FAILURE() << "1 MiB more passed the cap";
  } catch (const OutOfMemoryError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("[alloc] out of memory on cpu: asked 1.0 MiB"), std::string::npos) << msg;
    EXPECT_NE(msg.find("free under it"), std::string::npos) << msg;
  }
  EXPECT_EQ(a.stats().allocated, in_use + (512 << 10));  // the refused request left no trace
  a.deallocate(fits, 512 << 10, Stream{});
  set_cpu_memory_cap(0);
  void* big = a.allocate(4 << 20, Stream{});  // no cap any more
  a.deallocate(big, 4 << 20, Stream{});
}

TEST(OutOfMemory, AStepThatDoesNotFitSaysWhatFitsAndTheAdviceRuns) {
  test::TempDir dir;
  train::TrainConfig c = config_in(dir, "free");
  const train::TrainSummary free_run = train::train(c);
  const auto cap = static_cast<size_t>(free_run.memory_peak.total() - 1);
  HostCap guard(cap);
  c.paths.out = dir / "capped";
  const std::string msg = oom_message(c);
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  EXPECT_EQ(msg.rfind("[train] out of memory in step ", 0), 0u) << msg;
  EXPECT_NE(msg.find("on cpu: asked "), std::string::npos) << msg;
  EXPECT_NE(msg.find(str("cap ", format_bytes(cap))), std::string::npos) << msg;
  EXPECT_NE(msg.find("free under it"), std::string::npos) << msg;
  EXPECT_NE(msg.find("the run needs about "), std::string::npos) << msg;
  EXPECT_NE(msg.find("(estimated peak of stage 0, micro-batch 8)"), std::string::npos) << msg;
  EXPECT_FALSE(fs::exists(c.paths.out / "model"));
  EXPECT_FALSE(fs::exists(c.paths.out / "checkpoints"));
  // The advice, as flags, then runs under the same cap.
  const std::regex flags(
      "--zero-stage ([0-3]) --micro-batch ([0-9]+)( --grad-accum ([0-9]+))?"
      "( --activation-checkpointing)?$");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(msg, m, flags)) << msg;
  c.zero.stage = std::stoi(m[1]);
  c.data.micro_batch = std::stoll(m[2]);
  if (m[4].matched) c.data.grad_accum = std::stoll(m[4]);
  EXPECT_EQ(c.data.micro_batch * c.data.grad_accum, 8);  // the global batch stays
  c.activation_checkpointing = m[5].matched;
  c.paths.out = dir / "advised";
  const train::TrainSummary advised = train::train(c);
  EXPECT_LE(advised.memory_peak.total(), static_cast<int64_t>(cap));
}

TEST(OutOfMemory, SetupThatCannotFitSaysNothingFits) {
  test::TempDir dir;
  train::TrainConfig c = config_in(dir, "setup");
  HostCap guard(cpu_allocator().stats().allocated + 4096);
  const std::string msg = oom_message(c);
  EXPECT_EQ(msg.rfind("[train] out of memory in setup on cpu: asked ", 0), 0u) << msg;
  EXPECT_NE(msg.find("nothing zerotrain train runs fits in "), std::string::npos) << msg;
  EXPECT_NE(msg.find("(stage 3, micro-batch 1, accumulation 8, activation checkpointing)"),
            std::string::npos)
      << msg;
  EXPECT_FALSE(fs::exists(c.paths.out / "metrics.jsonl"));
}

TEST(OutOfMemory, FlagsKeepTheGlobalBatch) {
  train::TrainConfig c;
  c.data.micro_batch = 8;
  c.data.grad_accum = 2;
  estimate::RunSetup s;
  s.stage = 2;
  s.micro_batch = 2;
  s.activation_checkpointing = true;
  EXPECT_EQ(train::setup_flags(c, s),
            "--zero-stage 2 --micro-batch 2 --grad-accum 8 --activation-checkpointing");
  s.micro_batch = 8;
  s.activation_checkpointing = false;
  EXPECT_EQ(train::setup_flags(c, s), "--zero-stage 2 --micro-batch 8");
  c.data.micro_batch = 5;
  c.data.grad_accum = 1;
  s.micro_batch = 2;  // 5 rows per step do not split into micro-batches of 2
  EXPECT_EQ(train::setup_flags(c, s), "--zero-stage 2 --micro-batch 2");
}

// The advice proposes offload as the flags to add (only where the run's own device differs), and
// the run's offload policy reaches the estimate of a GPU run (a CPU run keeps it in the same host
// memory); offload setups must fit the host allocator's cap.
TEST(OutOfMemory, OffloadSetupsAreFlagsAndTheRunsPolicyIsEstimated) {
  using config::OffloadDevice;
  train::TrainConfig c;
  c.device = Device::cuda(0);
  c.data.micro_batch = 1;
  estimate::RunSetup s;
  s.stage = 3;
  s.micro_batch = 1;
  s.offload_optimizer = OffloadDevice::cpu;
  s.offload_param = OffloadDevice::cpu;
  EXPECT_EQ(train::setup_flags(c, s),
            "--zero-stage 3 --offload-optimizer cpu --offload-param cpu --micro-batch 1");
  s.offload_optimizer = OffloadDevice::nvme;
  EXPECT_EQ(train::setup_flags(c, s),
            "--zero-stage 3 --offload-optimizer nvme --offload-param cpu --nvme-path DIR "
            "--micro-batch 1");
  c.zero.offload.optimizer.device = OffloadDevice::nvme;
  c.zero.offload.optimizer.nvme_path = "/local_nvme";
  c.zero.offload.params.device = OffloadDevice::cpu;
  EXPECT_EQ(train::setup_flags(c, s), "--zero-stage 3 --micro-batch 1");
  s.stage = 2;
  s.offload_optimizer = OffloadDevice::none;
  s.offload_param = OffloadDevice::none;
  EXPECT_EQ(train::setup_flags(c, s),
            "--zero-stage 2 --offload-optimizer none --offload-param none --micro-batch 1");

  c.zero.stage = 3;
  c.zero.offload.sub_group_size = 1234;
  c.zero.offload.params.buffer_size = 777;
  const estimate::RunSetup gpu = train::run_setup(c, test::tiny_config(nn::Family::llama), 1);
  EXPECT_EQ(gpu.offload_optimizer, OffloadDevice::nvme);
  EXPECT_EQ(gpu.offload_param, OffloadDevice::cpu);
  EXPECT_EQ(gpu.offload_buffers.sub_group_size, 1234);
  EXPECT_EQ(gpu.offload_buffers.param_buffer_size, 777);
  EXPECT_GT(estimate::estimate_peak(gpu).host_per_gpu, 0);
  c.device = Device::cpu();
  const estimate::RunSetup host = train::run_setup(c, test::tiny_config(nn::Family::llama), 1);
  EXPECT_EQ(host.offload_optimizer, OffloadDevice::none);
  EXPECT_EQ(host.offload_param, OffloadDevice::none);
  EXPECT_EQ(train::setup_flags(c, estimate::RunSetup{}), "--zero-stage 0 --micro-batch 1");
  // A run configured by a ds_config: its keys, which flags could only contradict.
  c.paths.ds_config = "/configs/ds_z2.json";
  c.data.grad_accum = 4;
  s.stage = 3;
  s.offload_optimizer = OffloadDevice::nvme;
  s.activation_checkpointing = true;
  c.device = Device::cuda(0);
  c.zero.offload = {};
  EXPECT_EQ(train::setup_flags(c, s),
            "in ds_z2.json: zero_optimization.stage 3, zero_optimization.offload_optimizer.device "
            "nvme, zero_optimization.offload_optimizer.nvme_path DIR, "
            "train_micro_batch_size_per_gpu 1; and --activation-checkpointing");
  s.micro_batch = 2;
  c.data.micro_batch = 4;
  const std::string halved = train::setup_flags(c, s);
  EXPECT_NE(halved.find(", train_micro_batch_size_per_gpu 2, gradient_accumulation_steps 8; and"),
            std::string::npos)
      << halved;

  HostCap guard(cpu_allocator().stats().allocated + (size_t{1} << 30));
  EXPECT_EQ(train::host_memory_budget(),
            static_cast<double>(cpu_allocator().stats().allocated + (size_t{1} << 30)));
}

// The seed's case as advice (issue 15): GPT-2 XL, sequence 1024, micro-batch 16 on a GPU capped
// at 24 GiB proposes optimizer offload as the flags to add; a host too small for it moves the
// state to NVMe; a GPU run whose host allocation failed aims the host instead.
TEST(OutOfMemory, AdviceProposesOffloadWithinTheHostsMemory) {
  train::TrainConfig c;
  c.paths.model = test::fixtures_dir() / "estimate" / "gpt2_xl.json";
  c.device = Device::cuda(0);
  c.precision.dtype = DType::bf16;
  c.data.seq_len = 1024;
  c.data.micro_batch = 16;
  c.data.grad_accum = 1;
  train::MemoryBudgets b;
  b.device = 24.0 * (1 << 30);
  b.host = 128.0 * (1 << 30);
  const std::string roomy = train::out_of_memory_advice(c, 1, b);
  EXPECT_NE(roomy.find("; fits in 24.00 GiB: stage 2 + offload_optimizer=cpu, micro-batch 16"),
            std::string::npos)
      << roomy;
  EXPECT_NE(roomy.find(" of host memory per node): --zero-stage 2 --offload-optimizer cpu "
                       "--micro-batch 16"),
            std::string::npos)
      << roomy;
  c.zero.offload.sub_group_size = 100'000'000;  // nvme's staging buffers then fit a small host
  b.host = 12.0 * (1 << 30);
  const std::string small_host = train::out_of_memory_advice(c, 1, b);
  EXPECT_NE(small_host.find("--offload-optimizer nvme"), std::string::npos) << small_host;
  EXPECT_NE(small_host.find("--nvme-path DIR"), std::string::npos) << small_host;
  // The run had optimizer offload and its host allocation failed: the advice aims 10% under
  // the host estimate when that was under the budget, and keeps the GPU's budget.
  c.zero.stage = 2;
  c.zero.offload.optimizer.device = config::OffloadDevice::cpu;
  c.activation_checkpointing = true;
  b.host = 128.0 * (1 << 30);
  b.host_ran_out = true;
  const std::string host_out = train::out_of_memory_advice(c, 1, b);
  EXPECT_NE(host_out.find("10% under that estimate, which missed (budget 128.00 GiB) of host "
                          "memory: "),
            std::string::npos)
      << host_out;
  EXPECT_NE(host_out.find("--offload-optimizer nvme"), std::string::npos) << host_out;
}

// Issue 13: the advice counted f32 gradients and 12 optimizer bytes per parameter whatever
// --grad-accum-dtype, --comm-dtype and --precision low said. The estimate of the run's setup now
// counts the optimizer bytes the run allocates (TrainSummary::optimizer_bytes) and its dtypes.
TEST(OutOfMemory, SetupCountsTheRunsPrecisionAndDtypes) {
  test::TempDir dir;
  train::TrainConfig c = test::tiny_train_config(dir.path(), DType::bf16);
  c.paths.out = dir.path() / "out";
  c.steps = 1;
  for (const optim::Precision mode : {optim::Precision::mixed, optim::Precision::low}) {
    c.precision.mode = mode;
    const int64_t allocated = train::train(c).optimizer_bytes;
    const estimate::RunSetup s = train::run_setup(c, test::tiny_config(nn::Family::llama), 1);
    EXPECT_EQ(s.precision, mode);
    const estimate::PeakEstimate e = estimate::estimate_peak(s);
    EXPECT_DOUBLE_EQ(e.items[2].bytes, static_cast<double>(allocated))
        << optim::precision_name(mode) << ": " << e.items[2].name;
  }
  c.precision.grad_accum_dtype = DType::bf16;
  c.precision.comm_dtype = DType::f16;
  const estimate::RunSetup s = train::run_setup(c, test::tiny_config(nn::Family::llama), 2);
  EXPECT_EQ(s.grad_dtype, DType::bf16);
  EXPECT_EQ(s.comm_dtype, DType::f16);
  c.precision.comm_dtype = DType::bf16;
  EXPECT_EQ(train::run_setup(c, test::tiny_config(nn::Family::llama), 2).comm_dtype, DType::bf16);
}

// What train runs is the estimator's order, offload included (nvme behind one switch).
TEST(OutOfMemory, TrainRunsTheEstimatorsOrderWithOffload) {
  const std::vector<estimate::Strategy> all = estimate::strategies_in_order();
  const std::vector<estimate::Strategy> runs = train::train_strategies();
  ASSERT_GE(runs.size(), 7u);
  for (size_t i = 0; i < runs.size(); ++i)
    EXPECT_EQ(std::find(all.begin(), all.end(), runs[i]) - all.begin() >= static_cast<long>(i),
              true);
  EXPECT_EQ(runs[4],
            (estimate::Strategy{2, config::OffloadDevice::cpu, config::OffloadDevice::none}));
  EXPECT_EQ(runs[6],
            (estimate::Strategy{3, config::OffloadDevice::cpu, config::OffloadDevice::cpu}));
}

// Hybrid sharding: the estimate counts the shards of the group (zero_hpz_partition_size) where it
// fits the world; a size the engine refuses is counted as plain sharding.
TEST(OutOfMemory, SetupCountsHybridShardsOverTheGroup) {
  train::TrainConfig c;
  c.zero.stage = 3;
  c.zero.zero_hpz_partition_size = 2;
  const nn::ModelConfig model = test::tiny_config(nn::Family::llama);
  EXPECT_EQ(train::run_setup(c, model, 4).shard_group_size, 2);
  EXPECT_EQ(train::run_setup(c, model, 3).shard_group_size, 1);
  EXPECT_EQ(train::run_setup(c, model, 2).shard_group_size, 1);
  c.zero.stage = 0;
  EXPECT_EQ(train::run_setup(c, model, 4).shard_group_size, 1);
}

}  // namespace
}  // namespace zt
