// ZeRO stages 1, 2 and 3 against stage 0 on the same world size under mpirun (2 and 4 ranks): the
// per-step losses and gradient norms are equal and the final model.safetensors (gathered one
// group at a time, also inside the checkpoint with --checkpoint-weights) and the checkpoint's
// tensors are byte-identical, in f32, bf16 with f32 masters and bf16 in
// the low-precision mode (bf16 moments, no masters), with 1 and 4 accumulation steps, once with
// torch.optim.Adam's L2 decay and amsgrad, gradients accumulated in f32 or bf16 and summed across
// the ranks in f32, bf16 or f16 (those cases also differ from the f32/f32 run), and clipping on
// (max norm small enough that every step clips). The tiny gpt2 cases have tied embeddings (stage 3
// gathers the embedding's group for the head) and runs with activation checkpointing (stage 3
// gathers again before the recomputation). A run of stage 2 interrupted after its step-4 checkpoint
// and resumed from it in stage 3 ends bitwise where an uninterrupted stage 0 run ends (the
// checkpoint holds the gathered full optimizer state). A DeepSpeed OneCycle scheduler that cycles
// momentum (the engine's set_betas before every update) keeps the stages bitwise equal, and
// changes the result against the same schedule without momentum cycling. The other update rules
// keep the stages bitwise equal too: Lamb (its per-parameter trust ratio from norms summed over
// the ranks, [Note: Lamb across shards] in optim/flat_optimizer.h, and a resume in another
// stage), Lion and SGD (momentum with dampening, Nesterov, none), the elementwise ones also with
// optimizer offload to host memory and NVMe. See [Note: ZeRO stages] in
// src/zerotrain/zero/zero_stage.h.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "mpi/mpi_test_env.h"
#include "mpi/training_inputs.h"
#include "support/checkpoint_tensors.h"
#include "support/one_cycle.h"
#include "zerotrain/checkpoint/checkpoint_store.h"
#include "zerotrain/config/scheduler_config.h"
#include "zerotrain/train/trainer.h"

namespace zt {
namespace {

namespace fs = std::filesystem;

struct ParityCase {
  const char* name;
  nn::ModelConfig model;
  DType dtype;
  int64_t grad_accum;
  bool activation_checkpointing = false;
  // Stage 3: 0 gathers and releases every block around every use; 2000 keeps the embedding and
  // the head (1600-odd elements each) gathered and the layers (9000-odd) sharded.
  int64_t persistence_threshold = 0;
  // Stage 3: the default gathers every block ahead (the model is tiny); 0 gathers none ahead.
  int64_t prefetch_elements = 50'000'000;
  // [Note: communication dtype]: the dtype gradients accumulate in and the one they are summed in.
  DType grad_accum_dtype = DType::f32;
  DType comm_dtype = DType::f32;
  // low: bf16 values stepped in place with bf16 moments, no f32 masters (optim/precision.h).
  optim::Precision precision = optim::Precision::mixed;
  // The Adam variant: false is torch.optim.Adam's L2 decay; amsgrad adds max_exp_avg_sq shards.
  bool adam_w_mode = true;
  bool amsgrad = false;
  // A DeepSpeed scheduler section; unset: the warmup + cosine schedule of the flags.
  std::optional<config::SchedulerConfig> scheduler = {};
  // Stages 1-3: where the optimizer state lives ([Note: optimizer offload]); stage 0 keeps it on
  // the device, so every offload run is compared with a run without offload. offload_ratio
  // and offload_param apply at stage 3 only (DeepSpeed's rule).
  zero::OffloadPolicy offload = {};
  double offload_ratio = 1.0;
  // f16: updates skipped at these steps as after an overflow ([Note: fp16 step]).
  std::vector<int64_t> overflow_steps = {};
  // Another update rule than Adam (optim/optimizer_config.h): replaces the Adam settings above.
  std::optional<optim::OptimizerConfig> rule = {};
};

constexpr int64_t kSteps = 8;

train::TrainConfig config_for(const fs::path& dir, const ParityCase& k, int stage) {
  train::TrainConfig c;
  c.paths.model = dir / "config.json";
  c.paths.data = dir / "tokens.bin";
  c.steps = kSteps;
  c.data.micro_batch = 1;
  c.data.seq_len = 8;
  c.data.grad_accum = k.grad_accum;
  c.schedule.lr = 1e-2;
  c.schedule.warmup_steps = 2;
  c.optimizer.weight_decay = 0.1;
  c.clip = 0.05;  // below every step's norm: clipping always scales
  c.reporting.log_every = 1;
  c.data.seed = 5;
  c.precision.dtype = k.dtype;
  c.precision.grad_accum_dtype = k.grad_accum_dtype;
  c.precision.comm_dtype = k.comm_dtype;
  c.precision.mode = k.precision;
  c.optimizer.adam_w_mode = k.adam_w_mode;
  c.optimizer.amsgrad = k.amsgrad;
  if (k.rule) c.optimizer = *k.rule;
  c.activation_checkpointing = k.activation_checkpointing;
  c.comm = &test::process_group().host();
  c.zero.reduce_bucket_size = 3000;  // stage 0: several buckets
  c.zero.stage = stage;
  c.check_params_every = 4;  // the ranks' gathered values agree
  c.zero.param_persistence_threshold = k.persistence_threshold;
  c.zero.prefetch_bucket_size = k.prefetch_elements;
  c.schedule.deepspeed = k.scheduler;
  if (stage > 0) c.zero.offload = k.offload;
  if (stage == 3) c.zero.offload.optimizer.ratio = k.offload_ratio;
  if (stage < 3) c.zero.offload.params = {};  // offload_param is stage 3's
  c.test_hooks.inject_overflow_steps = k.overflow_steps;
  c.paths.out = dir / ("stage" + std::to_string(stage));
  c.reporting.checkpoint_weights = true;  // the copy inside the checkpoint equals the final model
  return c;
}

// stage0_model: receives stage 0's model.safetensors bytes on rank 0.
void run_parity(const ParityCase& k, std::string* stage0_model = nullptr) {
  comm::Communicator& comm = test::process_group().host();
  const fs::path dir = test::shared_temp_dir(std::string("zero_") + k.name);
  test::write_inputs(dir, k.model);
  for (int stage = 0; stage <= 3; ++stage)
    EXPECT_EQ(train::train(config_for(dir, k, stage)).steps, kSteps);
  comm.barrier();
  if (comm.rank() == 0) {
    const fs::path ref = dir / "stage0";
    const std::vector<double> loss0 = test::metric_of(ref / "metrics.jsonl", "loss");
    const std::vector<double> norm0 = test::metric_of(ref / "metrics.jsonl", "grad_norm");
    ASSERT_EQ(loss0.size(), static_cast<size_t>(kSteps));
    size_t skipped = 0;  // an overflow's norm is not finite (null in metrics.jsonl)
    for (double n : norm0) {
      if (std::isnan(n)) ++skipped;
      else EXPECT_GT(n, 0.05) << k.name << ": a step did not clip";
    }
    EXPECT_EQ(skipped, k.overflow_steps.size()) << k.name;
    const std::string model0 = test::file_bytes(ref / "model" / "model.safetensors");
    if (stage0_model) *stage0_model = model0;
    const auto opt0 = test::checkpoint_tensor_bytes(ref);
    ASSERT_FALSE(model0.empty());
    ASSERT_FALSE(opt0.empty());
    for (int stage = 1; stage <= 3; ++stage) {
      const fs::path out = dir / ("stage" + std::to_string(stage));
      const std::vector<double> loss = test::metric_of(out / "metrics.jsonl", "loss");
      const std::vector<double> norm = test::metric_of(out / "metrics.jsonl", "grad_norm");
      ASSERT_EQ(loss.size(), loss0.size()) << k.name << " stage " << stage;
      for (size_t i = 0; i < loss0.size(); ++i) {
        EXPECT_EQ(loss[i], loss0[i]) << k.name << " stage " << stage << " step " << i + 1;
        EXPECT_TRUE(norm[i] == norm0[i] || (std::isnan(norm[i]) && std::isnan(norm0[i])))
            << k.name << " stage " << stage << " step " << i + 1 << ": " << norm[i] << " vs "
            << norm0[i];
      }
      EXPECT_TRUE(test::file_bytes(out / "model" / "model.safetensors") == model0)
          << k.name << " stage " << stage << ": final weights differ from stage 0";
      EXPECT_TRUE(test::file_bytes(checkpoint::resolve_checkpoint(out) / "model" /
                                   "model.safetensors") == model0)
          << k.name << " stage " << stage << ": the checkpoint's weights differ from stage 0";
      EXPECT_TRUE(test::checkpoint_tensor_bytes(out) == opt0)
          << k.name << " stage " << stage << ": optimizer state differs from stage 0";
    }
    fs::remove_all(dir);
  }
  comm.barrier();
}

// A parity case must also change the result against `plain` (its stage 0 ends elsewhere):
// otherwise the setting it tests was ignored.
void run_parity_differing_from(const ParityCase& k, const ParityCase& plain, const char* what) {
  comm::Communicator& comm = test::process_group().host();
  const fs::path dir = test::shared_temp_dir(std::string("zero_plain_") + k.name);
  test::write_inputs(dir, k.model);
  train::train(config_for(dir, plain, 0));
  comm.barrier();
  std::string model0;
  run_parity(k, &model0);
  if (comm.rank() == 0) {
    ASSERT_FALSE(model0.empty());
    EXPECT_FALSE(model0 == test::file_bytes(dir / "stage0" / "model" / "model.safetensors"))
        << k.name << ": " << what << " changed nothing";
    fs::remove_all(dir);
  }
  comm.barrier();
}

// Other gradient dtypes against f32 accumulation and communication.
void run_parity_changing_dtypes(const ParityCase& k) {
  ParityCase plain = k;
  plain.grad_accum_dtype = plain.comm_dtype = DType::f32;
  run_parity_differing_from(k, plain, "the gradient dtypes");
}

// Another update rule against Adam.
void run_parity_changing_rule(const ParityCase& k) {
  ParityCase plain = k;
  plain.rule.reset();
  run_parity_differing_from(k, plain, "the update rule");
}

TEST(ZeroParity, LlamaF32NoAccumulation) {
  run_parity({"llama_f32_a1", test::tiny_llama(), DType::f32, 1});
}

TEST(ZeroParity, LlamaF32Accumulation4) {
  run_parity({"llama_f32_a4", test::tiny_llama(), DType::f32, 4});
}

TEST(ZeroParity, LlamaBf16NoAccumulation) {
  run_parity({"llama_bf16_a1", test::tiny_llama(), DType::bf16, 1});
}

TEST(ZeroParity, LlamaBf16Accumulation4) {
  run_parity({"llama_bf16_a4", test::tiny_llama(), DType::bf16, 4});
}

TEST(ZeroParity, Gpt2TiedBf16CheckpointedAccumulation2) {
  run_parity({"gpt2_bf16_a2", test::tiny_gpt2(), DType::bf16, 2, true, 0, 10000});
}

TEST(ZeroParity, LlamaBf16LowPrecisionNoAccumulation) {
  run_parity({"llama_bf16_low_a1", test::tiny_llama(), DType::bf16, 1, false, 0, 50'000'000,
              DType::f32, DType::f32, optim::Precision::low});
}

TEST(ZeroParity, Gpt2TiedBf16LowPrecisionCheckpointedAccumulation2) {
  run_parity({"gpt2_bf16_low_a2", test::tiny_gpt2(), DType::bf16, 2, true, 2000, 10000, DType::f32,
              DType::f32, optim::Precision::low});
}

// Also torch.optim.Adam's L2 decay with amsgrad: the max_exp_avg_sq shards split and gather.
TEST(ZeroParity, LlamaF32PersistentSmallBlocksAmsgradL2Accumulation2) {
  run_parity({.name = "llama_f32_persist_amsgrad_l2",
              .model = test::tiny_llama(),
              .dtype = DType::f32,
              .grad_accum = 2,
              .persistence_threshold = 2000,
              .prefetch_elements = 0,
              .adam_w_mode = false,
              .amsgrad = true});
}

// [Note: communication dtype]: every stage sums in the same dtype in rank order and accumulates in
// the same dtype, so the stages stay bitwise equal for every pair of dtypes.
TEST(ZeroParity, LlamaF32CommBf16Accumulation4) {
  run_parity_changing_dtypes({"llama_f32_comm_bf16_a4", test::tiny_llama(), DType::f32, 4, false, 0,
                              50'000'000, DType::f32, DType::bf16});
}

TEST(ZeroParity, LlamaBf16AccumBf16CommBf16Accumulation4) {
  run_parity_changing_dtypes({"llama_bf16_acc_bf16_a4", test::tiny_llama(), DType::bf16, 4, false,
                              0, 50'000'000, DType::bf16, DType::bf16});
}

TEST(ZeroParity, Gpt2TiedBf16AccumBf16CommF32CheckpointedAccumulation2) {
  run_parity_changing_dtypes({"gpt2_bf16_acc_bf16_comm_f32", test::tiny_gpt2(), DType::bf16, 2,
                              true, 0, 10000, DType::bf16, DType::f32});
}

TEST(ZeroParity, LlamaBf16CommF16NoAccumulation) {
  run_parity_changing_dtypes({"llama_bf16_comm_f16_a1", test::tiny_llama(), DType::bf16, 1, false,
                              2000, 0, DType::f32, DType::f16});
}

// Every stage follows the cycled betas as stage 0 does; and the betas did change the run.
TEST(ZeroParity, LlamaBf16OneCycleMomentumAccumulation2) {
  comm::Communicator& comm = test::process_group().host();
  ParityCase k{"llama_bf16_onecycle_a2", test::tiny_llama(), DType::bf16, 2};
  k.scheduler = test::one_cycle(false, 3);
  const fs::path dir = test::shared_temp_dir("zero_onecycle_plain");
  test::write_inputs(dir, k.model);
  train::train(config_for(dir, k, 0));
  comm.barrier();
  k.scheduler = test::one_cycle(true, 3);
  std::string model0;
  run_parity(k, &model0);
  if (comm.rank() == 0) {
    ASSERT_FALSE(model0.empty());
    EXPECT_FALSE(model0 == test::file_bytes(dir / "stage0" / "model" / "model.safetensors"))
        << "cycling the momentum changed nothing";
    fs::remove_all(dir);
  }
  comm.barrier();
}

// Optimizer offload to host memory (a CPU run's host-side placement: separate host buffers, the
// gradients copied in and the values copied back after each sub-group) against stage 0 without
// offload: bitwise, with several sub-groups per step, and at stage 3 with a partial offload.
zero::OffloadPolicy cpu_offload(int64_t sub_group_size) {
  zero::OffloadPolicy p;
  p.optimizer.device = zero::OffloadDevice::cpu;
  p.optimizer.pin_memory = true;
  p.sub_group_size = sub_group_size;
  return p;
}

TEST(ZeroParity, LlamaBf16OffloadOptimizerAccumulation4) {
  ParityCase k{"llama_bf16_offload_a4", test::tiny_llama(), DType::bf16, 4};
  k.offload = cpu_offload(20'000);
  k.offload_ratio = 0.5;
  run_parity(k);
}

TEST(ZeroParity, Gpt2TiedF32OffloadOptimizerAmsgradCheckpointed) {
  ParityCase k{"gpt2_f32_offload_ams", test::tiny_gpt2(), DType::f32, 2, true};
  k.amsgrad = true;
  k.offload = cpu_offload(1);  // one group per sub-group
  run_parity(k);
}

TEST(ZeroParity, LlamaBf16LowPrecisionOffloadOptimizer) {
  ParityCase k{"llama_lowp_offload", test::tiny_llama(), DType::bf16, 1};
  k.precision = optim::Precision::low;
  k.offload = cpu_offload(1'000'000'000);
  run_parity(k);
}

TEST(ZeroParity, LlamaF16OverflowSkipsOffloadOptimizerAccumulation2) {
  ParityCase k{"llama_f16_offload_skips", test::tiny_llama(), DType::f16, 2};
  k.overflow_steps = {2, 5};
  k.offload = cpu_offload(20'000);
  run_parity(k);
}

// Stage 3 with the value shards in host memory too (ZeRO-Offload of parameters): gathered from
// the host before each use, stepped in place by the CPU Adam; persistent blocks refreshed after
// each step from the host shards.
TEST(ZeroParity, Gpt2TiedBf16OffloadParamsAndOptimizerCheckpointedAccumulation2) {
  ParityCase k{"gpt2_bf16_offload_params", test::tiny_gpt2(), DType::bf16, 2, true, 2000};
  k.offload = cpu_offload(20'000);
  k.offload.params.device = zero::OffloadDevice::cpu;
  k.offload.params.pin_memory = true;
  run_parity(k);
}

// ZeRO-Infinity: the host optimizer state in each rank's swap file between steps, one sub-group
// per group and two staging buffers, so reads, updates and write-backs overlap; with resume.
zero::OffloadPolicy nvme_offload(const fs::path& dir) {
  zero::OffloadPolicy p = cpu_offload(1);
  p.optimizer.device = zero::OffloadDevice::nvme;
  p.optimizer.nvme_path = dir.string();
  p.optimizer.buffer_count = 2;
  return p;
}

TEST(ZeroParity, LlamaBf16OffloadOptimizerToNvmeAccumulation2) {
  const fs::path nvme = test::shared_temp_dir("zero_nvme_swap");
  ParityCase k{"llama_bf16_nvme_a2", test::tiny_llama(), DType::bf16, 2};
  k.offload = nvme_offload(nvme);
  run_parity(k);
  test::process_group().host().barrier();
  EXPECT_TRUE(fs::is_empty(nvme)) << "a swap directory outlived its run";
}

// ZeRO-Infinity's parameters: stage 3's value shards only in each rank's swap file, staged
// through buffer_count buffers; a small buffer_size reads one group at a time, a large one packs
// every group into one read. With the optimizer state on NVMe too, partly on the host, or on the
// device (DeepSpeed's inference configs set offload_param nvme alone: the device steps a copy).
// max_in_cpu 0 unless a case says otherwise (staging buffers alone, every unit read from the file
// each time); a small one keeps a few units in cache buffers and evicts the rest.
zero::OffloadPolicy with_params_on_nvme(zero::OffloadPolicy p, const fs::path& dir,
                                        int64_t buffer_size, int64_t buffer_count,
                                        int64_t max_in_cpu = 0) {
  p.params.device = zero::OffloadDevice::nvme;
  p.params.nvme_path = dir.string();
  p.params.buffer_size = buffer_size;
  p.params.buffer_count = buffer_count;
  p.params.max_in_cpu = max_in_cpu;
  return p;
}

TEST(ZeroParity, Gpt2TiedBf16OffloadParamsAndOptimizerToNvmeCheckpointedAccumulation2) {
  const fs::path nvme = test::shared_temp_dir("zero_nvme_params_swap");
  ParityCase k{"gpt2_bf16_nvme_params", test::tiny_gpt2(), DType::bf16, 2, true, 2000};
  k.offload = with_params_on_nvme(nvme_offload(nvme), nvme, 1, 2);
  run_parity(k);
  test::process_group().host().barrier();
  EXPECT_TRUE(fs::is_empty(nvme)) << "a swap directory outlived its run";
}

TEST(ZeroParity, LlamaBf16OffloadParamsToNvmePartialOptimizerOffload) {
  ParityCase k{"llama_bf16_nvme_params_ratio", test::tiny_llama(), DType::bf16, 1};
  k.offload = with_params_on_nvme(cpu_offload(20'000),
                                  test::shared_temp_dir("zero_nvme_params_ratio"), 1'000'000, 5);
  k.offload_ratio = 0.5;
  run_parity(k);
}

TEST(ZeroParity, LlamaF32OffloadParamsToNvmeOptimizerOnTheDevice) {
  ParityCase k{"llama_f32_nvme_params_only", test::tiny_llama(), DType::f32, 2};
  k.offload = with_params_on_nvme({}, test::shared_temp_dir("zero_nvme_params_only"), 1, 1);
  run_parity(k);
}

// Cache buffers beside one staging buffer (buffer_size 1: a unit per group of four; a buffer of
// the largest bf16 shard holds 8192 elements at 2 ranks, 4096 at 4, so 10000 elements make one
// or two cache buffers): units are evicted and read again every step while the host optimizer
// stores into cached and evicted units alike.
TEST(ZeroParity, Bf16OffloadParamsToNvmeWithASmallMaxInCpuEvicts) {
  const fs::path nvme = test::shared_temp_dir("zero_nvme_params_cache");
  ParityCase k{"llama_bf16_nvme_params_cache", test::tiny_llama(), DType::bf16, 2};
  k.offload = with_params_on_nvme(nvme_offload(nvme), nvme, 1, 1, 10'000);
  run_parity(k);
}

// The other update rules: DeepSpeed's FusedLamb (BERT's settings), Lion, torch's SGD.
optim::OptimizerConfig lamb_rule() {
  optim::OptimizerConfig c;
  c.kind = optim::OptimizerKind::lamb;
  c.beta1 = 0.9;
  c.beta2 = 0.999;
  c.eps = 1e-6;
  c.weight_decay = 0.01;
  c.bias_correction = false;
  c.max_coeff = 0.3;
  c.min_coeff = 0.01;
  return c;
}

optim::OptimizerConfig lion_rule() {
  optim::OptimizerConfig c;
  c.kind = optim::OptimizerKind::lion;
  c.beta1 = 0.9;
  c.beta2 = 0.99;
  c.weight_decay = 0.1;
  return c;
}

optim::OptimizerConfig sgd_rule(double momentum, double dampening, bool nesterov) {
  optim::OptimizerConfig c;
  c.kind = optim::OptimizerKind::sgd;
  c.momentum = momentum;
  c.dampening = dampening;
  c.nesterov = nesterov;
  c.weight_decay = 0.01;
  return c;
}

// The layers' groups (9000-odd elements) are cut between ranks inside parameters, so a trust
// ratio needs the norms of pieces on other ranks.
TEST(ZeroParity, LlamaBf16LambAccumulation2) {
  ParityCase k{"llama_bf16_lamb_a2", test::tiny_llama(), DType::bf16, 2};
  k.rule = lamb_rule();
  run_parity_changing_rule(k);
}

TEST(ZeroParity, Gpt2TiedF32LambPersistentCheckpointed) {
  ParityCase k{"gpt2_f32_lamb", test::tiny_gpt2(), DType::f32, 1, true, 2000};
  k.rule = lamb_rule();
  k.rule->bias_correction = true;
  k.rule->eps_inside_sqrt = true;
  run_parity(k);
}

TEST(ZeroParity, LlamaBf16LionOffloadOptimizerAccumulation2) {
  ParityCase k{"llama_bf16_lion_offload", test::tiny_llama(), DType::bf16, 2};
  k.rule = lion_rule();
  k.offload = cpu_offload(20'000);
  run_parity(k);
}

TEST(ZeroParity, Gpt2TiedBf16LionCheckpointed) {
  ParityCase k{"gpt2_bf16_lion", test::tiny_gpt2(), DType::bf16, 1, true};
  k.rule = lion_rule();
  run_parity_changing_rule(k);
}

TEST(ZeroParity, LlamaBf16SgdNesterovAccumulation2) {
  ParityCase k{"llama_bf16_sgd_nesterov", test::tiny_llama(), DType::bf16, 2};
  k.rule = sgd_rule(0.9, 0.0, true);
  run_parity_changing_rule(k);
}

TEST(ZeroParity, LlamaF32SgdMomentumDampeningOffloadOptimizerToNvme) {
  ParityCase k{"llama_f32_sgd_nvme", test::tiny_llama(), DType::f32, 1};
  k.rule = sgd_rule(0.8, 0.1, false);
  k.offload = nvme_offload(test::shared_temp_dir("zero_sgd_nvme_swap"));
  run_parity(k);
}

TEST(ZeroParity, LlamaBf16SgdWithoutMomentum) {
  ParityCase k{"llama_bf16_sgd_plain", test::tiny_llama(), DType::bf16, 1};
  k.rule = sgd_rule(0.0, 0.0, false);
  run_parity_changing_rule(k);
}

struct Interrupted : std::runtime_error {
  Interrupted() : std::runtime_error("interrupted") {}
};

// Stage 2 interrupted after its step-4 checkpoint and resumed in stage 3 ends where stage 0 does.
void run_resume_in_another_stage(const ParityCase& k) {
  comm::Communicator& comm = test::process_group().host();
  const fs::path dir = test::shared_temp_dir(std::string("zero_resume_") + k.name);
  test::write_inputs(dir, k.model);
  train::train(config_for(dir, k, 0));
  train::TrainConfig first = config_for(dir, k, 2);
  first.reporting.save_every = 4;
  train::TrainCallbacks stop;
  stop.on_step = [](int64_t done, int64_t, double) {
    if (done == 5) throw Interrupted();
  };
  EXPECT_THROW(train::train(first, stop), Interrupted);
  comm.barrier();
  train::TrainConfig second = config_for(dir, k, 3);
  second.paths.resume = dir / "stage2";
  second.paths.out = dir / "resumed";
  EXPECT_EQ(train::train(second).steps, kSteps - 4);
  comm.barrier();
  if (comm.rank() == 0) {
    const std::vector<double> ref = test::metric_of(dir / "stage0" / "metrics.jsonl", "loss");
    const std::vector<double> resumed = test::metric_of(dir / "resumed" / "metrics.jsonl", "loss");
    ASSERT_EQ(resumed.size(), static_cast<size_t>(kSteps - 4));
    for (size_t i = 0; i < resumed.size(); ++i)
      EXPECT_EQ(resumed[i], ref[i + 4]) << "step " << i + 5;
    EXPECT_TRUE(test::file_bytes(dir / "resumed" / "model" / "model.safetensors") ==
                test::file_bytes(dir / "stage0" / "model" / "model.safetensors"));
    fs::remove_all(dir);
  }
  comm.barrier();
}

TEST(ZeroParity, ResumesInAnotherStageFromAShardedCheckpoint) {
  run_resume_in_another_stage({"bf16", test::tiny_llama(), DType::bf16, 2});
}

TEST(ZeroParity, ResumesWithOptimizerOffloadBitwise) {
  ParityCase k{"bf16_offload", test::tiny_llama(), DType::bf16, 2};
  k.offload = cpu_offload(20'000);
  run_resume_in_another_stage(k);
  k.name = "bf16_nvme";
  k.offload = nvme_offload(test::shared_temp_dir("zero_resume_nvme_swap"));
  run_resume_in_another_stage(k);
}

// The other rules' state (Lamb's moments; SGD's momentum buffers offloaded) resumes too.
TEST(ZeroParity, LambResumesInAnotherStageBitwise) {
  ParityCase k{"bf16_lamb", test::tiny_llama(), DType::bf16, 2};
  k.rule = lamb_rule();
  run_resume_in_another_stage(k);
}

TEST(ZeroParity, SgdResumesInAnotherStageWithOffloadBitwise) {
  ParityCase k{"bf16_sgd_offload", test::tiny_llama(), DType::bf16, 2};
  k.rule = sgd_rule(0.9, 0.0, false);
  k.offload = cpu_offload(20'000);
  run_resume_in_another_stage(k);
}

}  // namespace
}  // namespace zt
