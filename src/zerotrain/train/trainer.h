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

#include "zerotrain/comm/communicator.h"
#include "zerotrain/core/device.h"
#include "zerotrain/monitor/metrics.h"
#include "zerotrain/optim/optimizer_config.h"
#include "zerotrain/train/data_config.h"
#include "zerotrain/train/eval_config.h"
#include "zerotrain/train/fault_config.h"
#include "zerotrain/train/memory_report.h"
#include "zerotrain/train/precision_config.h"
#include "zerotrain/train/report_config.h"
#include "zerotrain/train/run_paths.h"
#include "zerotrain/train/schedule_config.h"
#include "zerotrain/zero/zero_config.h"

namespace zt::train {

// The run configuration: one section per layer that uses it, each built once (from the flags or a
// ds_config, ds_train_config.h) and checked once (validate_train_config, which train calls).
struct TrainConfig {
  RunPaths paths;
  DataConfig data;
  int64_t steps = 100;  // total optimizer steps, counted from the start of the first run
  optim::OptimizerConfig optimizer;
  double clip = 1.0;  // global-norm clipping (gradient_clipping); <= 0 turns it off
  ScheduleConfig schedule;
  PrecisionConfig precision;
  zero::ZeroConfig zero;
  ReportConfig reporting;
  EvalConfig eval;  // validation loss on a held-out token file ([Note: evaluation])
  Device device = Device::cpu();
  bool activation_checkpointing = false;
  FaultConfig faults;  // non-finite values and stop signals (fault_config.h)

  // Data parallelism (zero/zero_stage.h): a communicator over the ranks for buffers on `device`
  // (NCCL for cuda, MPI for the CPU), not owned; nullptr: one process. Each rank reads its shard
  // of every step (the global batch is micro_batch x grad_accum x world); only rank 0 writes files
  // and calls the callbacks' consumers (the CLI).
  comm::Communicator* comm = nullptr;
  int64_t check_params_every = 0;  // also compare parameter checksums every N steps (0: at start)

  // Test hooks (fault injection), never set by the CLI.
  struct TestHooks {
    // At these optimizer steps (1-based) the first micro-step's loss gradient is multiplied by
    // +inf on every rank, so that step's gradients overflow deterministically (tests of
    // [Note: fp16 step]).
    std::vector<int64_t> inject_overflow_steps;
  } test_hooks;
};

// The one check of a whole configuration: every section's validate_* once, then steps > 0,
// check_params_every >= 0 and inject_overflow_steps >= 1. Throws ValueError naming the flag and
// the ds_config key.
void validate_train_config(const TrainConfig& c);

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
  std::string attention;  // the attention paths that ran (kernels::attention_paths_used)
  int world_size = 1;
  // ZeRO: the stage and the model-state bytes rank 0 holds after the first optimizer step (values,
  // gradients, optimizer state incl. f32 masters), as the engine's buffers add up.
  int zero_stage = 0;
  int64_t shard_group = 0;  // hybrid sharding's group size ([Note: hybrid sharding]); 0: plain
  int64_t param_bytes = 0, grad_bytes = 0, optimizer_bytes = 0;
  // What the model started from: "the weights of DIR/model.safetensors", "a random init (...),
  // seed 7", "the checkpoint DIR" (io/model_source.h).
  std::string init;
  // Where zero.Init built the shards from ("seeded init (seed 5)", "safetensors DIR"); empty when
  // the full model was built.
  std::string zero_init;
  // Steps this call ran whose update a non-finite gradient skipped, and the loss scale at
  // the end (1 without fp16).
  int64_t skipped_steps = 0;
  // --packing off: examples of this rank longer than a row, cut to fit (data::DataLoader).
  uint64_t examples_cut = 0;
  double loss_scale = 1;
  // SIGTERM or SIGINT when the run stopped on it ([Note: stop on a signal] in stop_signal.h)
  // after step `stopped_step` (counted from the start of the first run), with a checkpoint of
  // that step and without model/; 0 otherwise.
  int stop_signal = 0;
  int64_t stopped_step = 0;
  // Checkpoints this call saved: training blocked for the copies to host memory
  // (checkpoint_blocked_s; the last save's alone in checkpoint_last_blocked_s) and for earlier
  // saves still writing when the next was due, or for the host buffers made ahead of the first
  // save (checkpoint_waited_s); the files were written in checkpoint_write_s (in the background
  // when async, and synchronously counted in blocked too); checkpoint_bytes is this rank's shard
  // bytes. A resume's read of its shard: resume_load_s.
  int checkpoint_saves = 0;
  uint64_t checkpoint_bytes = 0;
  double checkpoint_blocked_s = 0, checkpoint_last_blocked_s = 0, checkpoint_waited_s = 0,
         checkpoint_write_s = 0;
  double resume_load_s = 0;
  // This rank's memory after setup and at the step where allocated memory peaked
  // ([Note: memory report]).
  MemoryReport memory_start, memory_peak;
  // From this process's start to the end of setup, just before the first step.
  double startup_seconds = 0;
  std::filesystem::path model_dir, checkpoint_dir, metrics_path, csv_path, plot_path;
  std::filesystem::path csv_monitor_dir;   // empty without csv_monitor
  std::filesystem::path tensorboard_file;  // the event file; empty without tensorboard
  std::filesystem::path wandb_run_dir;     // the offline wandb run; empty without wandb
  // The evaluations this call ran (--eval-data), in step order; their seconds are not in
  // `seconds` nor in the rates.
  std::vector<monitor::EvalMetrics> evals;
  double eval_seconds = 0;
};

// Called with each logged step (for the progress line) and once a step finishes (done, total).
struct TrainCallbacks {
  std::function<void(const monitor::StepMetrics&)> on_log;
  std::function<void(int64_t done, int64_t total, double loss)> on_step;
  std::function<void(const MemoryReport&)> on_memory_start;  // once, after setup
  // Rank 0's warnings (the precision guard); unset: printed to stderr.
  std::function<void(const std::string& line)> on_warning;
  // With --eval-data: once after setup, what is evaluated (Evaluator::describe), then each
  // evaluation's result.
  std::function<void(const std::string& eval_set)> on_eval_set;
  std::function<void(const monitor::EvalMetrics&)> on_eval;

  // A warning line: to on_warning, or stderr without it.
  void warn(const std::string& line) const;
};

// With config.eval.only: the model (or the resumed checkpoint) is evaluated once on
// config.eval.data and nothing else happens (no --data, no step, no file written); the summary
// holds that one evaluation.
// Throws ValueError for a bad config, a resume checkpoint without its COMPLETE marker, one saved
// with another seq_len / micro_batch / grad_accum / seed / dtype, or one already at `steps`;
// OutOfMemoryError("[train] out of memory in ...") with the advice of out_of_memory.h when an
// allocation fails ([Note: out of memory]).
TrainSummary train(const TrainConfig& config, const TrainCallbacks& callbacks = {});

}  // namespace zt::train
