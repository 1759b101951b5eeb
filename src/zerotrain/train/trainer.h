// The single-process training loop: batches from a token file -> every block's forward and backward
// (with optional activation checkpointing) -> global-norm clipping -> AdamW with a warmup + decay
// schedule; logs loss, grad norm, lr, tokens/s, MFU and memory; writes metrics (JSONL), a
// loss-curve PNG, the final model in Hugging Face layout, and a checkpoint of the full training
// state (checkpoint.h) from which a later call continues exactly. With a communicator it runs data
// parallel through the ZeRO stage the config names (zero/zero_stage.h). Tested by
// tests/train/test_trainer_resume.cpp, tests/zero/test_zero_stage.cpp and tests/mpi/.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "zerotrain/comm/communicator.h"
#include "zerotrain/config/ds_config.h"
#include "zerotrain/core/device.h"
#include "zerotrain/core/dtype.h"
#include "zerotrain/train/loss_scaler.h"
#include "zerotrain/train/memory_report.h"
#include "zerotrain/monitor/metrics.h"
#include "zerotrain/optim/precision.h"

namespace zt::train {

struct TrainConfig {
  // A Hugging Face model directory (config.json, with or without weights) or a config.json file;
  // without weights the model starts from a seeded random init.
  std::filesystem::path model;
  std::filesystem::path data;  // token file (zerotrain data prepare)
  std::filesystem::path out;   // model/, checkpoint/, metrics.jsonl, loss.png
  // A checkpoint directory (`<out>/checkpoint` of an earlier run) to continue from: its weights,
  // optimizer state, data position and step replace the init; training goes on to `steps`.
  std::filesystem::path resume;
  int64_t steps = 100;  // total optimizer steps, counted from the start of the first run
  int64_t micro_batch = 8;
  int64_t seq_len = 128;
  int64_t grad_accum = 1;
  double lr = 3e-4;
  int64_t warmup_steps = 0;
  std::string schedule = "cosine";  // constant | linear | cosine
  double min_lr_ratio = 0.1;        // cosine floor
  // A DeepSpeed scheduler block {"type", "params"} (--deepspeed; train_scheduler.h), which replaces
  // schedule / warmup_steps / min_lr_ratio; null: those.
  nlohmann::json scheduler;
  double weight_decay = 0.1;
  double beta1 = 0.9, beta2 = 0.95, eps = 1e-8;
  // The Adam variant (train::AdamWOptions): decoupled weight decay (AdamW) or, false,
  // torch.optim.Adam's L2 term; amsgrad (not with optim::Precision::low); bias correction.
  bool decoupled_weight_decay = true;
  bool amsgrad = false;
  bool bias_correction = true;
  double clip = 1.0;  // global-norm clipping; <= 0 turns it off
  uint64_t seed = 1234;
  Device device = Device::cpu();
  // Parameters and activations; f32 masters when f16/bf16. f16 scales the loss gradient
  // (loss_scaler, [Note: fp16 step] in fp16_step.h).
  DType dtype = DType::f32;
  LossScalerOptions loss_scaler;  // f16 only: ds_config's fp16 section (DeepSpeed's defaults)
  // With bf16: mixed keeps f32 masters and moments; low steps the bf16 values in place with bf16
  // moments ([Note: precision modes] in precision.h). Either way the precision guard
  // (precision_guard.h) checks rank 0's updates and warns once when they vanish.
  optim::Precision precision = optim::Precision::mixed;
  // The dtype gradients accumulate in over the micro-steps: f32 or `dtype`
  // (data_types.grad_accum_dtype), and the dtype they are summed in across the ranks: f32, bf16 or
  // f16 (communication_data_type). f32 for both unless set: see [Note: communication dtype] in
  // zero/grad_comm.h for why not DeepSpeed's defaults.
  DType grad_accum_dtype = DType::f32;
  DType comm_dtype = DType::f32;
  bool activation_checkpointing = false;
  int64_t log_every = 10;
  int64_t plot_every = 0;  // also write loss.png every N steps (0: at the end only)
  int64_t save_every = 0;  // also write the checkpoint every N steps (0: at the end only)
  // Per-phase milliseconds (forward, backward, comm, step) in the metrics; synchronizes the device
  // at each phase boundary (wall_clock.h).
  bool wall_clock_breakdown = false;
  // DeepSpeed's csv_monitor: also write its per-metric CSV files here (metrics_csv.h); empty: off.
  std::filesystem::path csv_monitor_dir;
  // DeepSpeed's tensorboard monitor: also write a TensorBoard event file in this directory
  // (tensorboard_monitor.h); empty: off.
  std::filesystem::path tensorboard_dir;
  // DeepSpeed's wandb monitor: with `enabled`, an offline wandb run under <out>/wandb
  // (wandb_monitor.h) with the section's project, group and team.
  config::WandbConfig wandb;

  // Data parallelism, ZeRO stage 0 (zero/data_parallel.h): a communicator over the ranks for
  // buffers on `device` (NCCL for cuda, MPI for the CPU), not owned; nullptr: one process. Each
  // rank reads its shard of every step (the global batch is micro_batch x grad_accum x world);
  // only rank 0 writes files and calls the callbacks' consumers (the CLI).
  comm::Communicator* comm = nullptr;
  int64_t reduce_bucket_elements = 500'000'000;  // zero_optimization.reduce_bucket_size
  bool overlap_comm = true;                      // zero_optimization.overlap_comm
  int64_t check_params_every = 0;  // also compare parameter checksums every N steps (0: at start)
  // ZeRO stage 0-3 (zero/zero_stage.h): 1 shards the optimizer state, 2 also the gradients, 3 also
  // the parameters. Every stage gives bitwise the same losses and weights on a given world size.
  int zero_stage = 0;
  // Stage 3: blocks with fewer parameter elements stay gathered between uses
  // (zero_optimization.stage3_param_persistence_threshold).
  int64_t persistence_threshold = 100'000;
  // Stage 3 prefetch bounds in elements (stage3_prefetch_bucket_size, stage3_max_live_parameters).
  int64_t prefetch_elements = 50'000'000;
  int64_t max_live_elements = 1'000'000'000;
  // Stage 3: DeepSpeed's zero.Init (zero/shard_init.h): the full model is never built; each rank
  // generates (seeded init) or reads (the model directory's safetensors, its slices only) just
  // its value shards. A resume loads the checkpoint's full values as before. Same bits either way.
  bool zero_init = true;

  // Test hook (fault injection), never set by the CLI: at these optimizer steps (1-based) the
  // first micro-step's loss gradient is multiplied by +inf on every rank, so that step's
  // gradients overflow deterministically (tests of [Note: fp16 step]).
  std::vector<int64_t> inject_overflow_steps;
};

// Counts and rates cover the steps this call ran (from the resumed step on); tokens and rates are
// per rank (per GPU), the loss is the global batch's.
struct TrainSummary {
  int64_t steps = 0;
  int64_t tokens = 0;
  double first_loss = 0, last_loss = 0;  // mean of the first / last logged interval
  double seconds = 0;
  double tokens_per_s = 0;
  double mfu = 0;  // NaN without a known device peak
  double peak_mem_gib = 0;
  int world_size = 1;
  // ZeRO: the stage and the model-state bytes rank 0 holds after the first optimizer step (values,
  // gradients, optimizer state incl. f32 masters), as the engine's buffers add up.
  int zero_stage = 0;
  int64_t param_bytes = 0, grad_bytes = 0, optimizer_bytes = 0;
  // Where zero.Init built the shards from ("seeded init (seed 5)", "safetensors DIR"); empty when
  // the full model was built.
  std::string zero_init;
  // Steps this call ran whose update a non-finite gradient skipped, and the loss scale at
  // the end (1 without fp16).
  int64_t skipped_steps = 0;
  double loss_scale = 1;
  // This rank's memory after setup and at the step where allocated memory peaked
  // ([Note: memory report]).
  MemoryReport memory_start, memory_peak;
  std::filesystem::path model_dir, checkpoint_dir, metrics_path, csv_path, plot_path;
  std::filesystem::path csv_monitor_dir;   // empty without csv_monitor
  std::filesystem::path tensorboard_file;  // the event file; empty without tensorboard
  std::filesystem::path wandb_run_dir;     // the offline wandb run; empty without wandb
};

// Called with each logged step (for the progress line) and once a step finishes (done, total).
struct TrainCallbacks {
  std::function<void(const monitor::StepMetrics&)> on_log;
  std::function<void(int64_t done, int64_t total, double loss)> on_step;
  std::function<void(const MemoryReport&)> on_memory_start;  // once, after setup
  // Rank 0's warnings (the precision guard); unset: printed to stderr.
  std::function<void(const std::string& line)> on_warning;
};

// Throws ValueError for a bad config, a resume checkpoint without its COMPLETE marker, one saved
// with another seq_len / micro_batch / grad_accum / seed / dtype, or one already at `steps`;
// OutOfMemoryError("[train] out of memory in ...") with the advice of out_of_memory.h when an
// allocation fails ([Note: out of memory]).
TrainSummary train(const TrainConfig& config, const TrainCallbacks& callbacks = {});

}  // namespace zt::train
