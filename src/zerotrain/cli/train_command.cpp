// `zerotrain train`: training of a Hugging Face-layout model on a token file, in one process or
// data-parallel over the ranks of a launcher (mpirun, srun, torchrun, `zerotrain launch`, or
// `--nproc N`, which re-runs this command under `zerotrain launch`), with a progress bar (live loss
// and tokens/s), periodic log lines, the validation loss of --eval-data, a final summary table and a
// short greedy sample of the trained model (training_sample.h), printed by rank 0. --eval-only
// evaluates the model once instead.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "zerotrain/cli/command_line_guards.h"
#include "zerotrain/cli/commands.h"
#include "zerotrain/cli/given_flags.h"
#include "zerotrain/cli/progress.h"
#include "zerotrain/cli/training_sample.h"
#include "zerotrain/comm/process_group.h"
#include "zerotrain/config/load.h"
#include "zerotrain/core/allocator.h"
#include "zerotrain/core/device.h"
#include "zerotrain/core/error.h"
#include "zerotrain/core/process_clock.h"
#include "zerotrain/estimate/units.h"
#include "zerotrain/io/hf_config.h"
#include "zerotrain/io/model_source.h"
#include "zerotrain/train/ds_train_config.h"
#include "zerotrain/train/nvme_path_check.h"
#include "zerotrain/train/offload_flags.h"
#include "zerotrain/train/step_measures.h"
#include "zerotrain/train/stop_signal.h"
#include "zerotrain/train/trainer.h"

namespace zt::cli {

namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// Tokens and rates are per rank when there are several (TrainSummary).
// A run stopped by SIGTERM/SIGINT ([Note: stop on a signal] in train/stop_signal.h): one line.
void print_stop_line(const train::TrainSummary& s, const std::filesystem::path& out) {
  std::printf("[train] stopped on %s after step %lld; checkpoint %s (continue with --resume %s)\n",
              train::stop_signal_name(s.stop_signal), static_cast<long long>(s.stopped_step),
              s.checkpoint_dir.string().c_str(), out.string().c_str());
  std::fflush(stdout);
}

// train() on one rank of a multi-rank run: a failure is printed and ends the process at once
// (exit 1). Returning would run MPI_Finalize (the process group's destructor), which waits for
// ranks still inside a collective with this one: the job would hang instead of dying whole, as
// mpirun and the launcher stop the other ranks when one exits non-zero.
template <class Train>
train::TrainSummary run_rank(bool many_ranks, Train&& train_fn) {
  if (!many_ranks) return train_fn();
  try {
    return train_fn();
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "[zerotrain] unexpected error: %s\n", e.what());
  }
  std::fflush(stdout);
  std::fflush(stderr);
  std::exit(1);
}

// 128 + the signal number after a stop on a signal, as a process killed by it reports; else 0.
int stop_exit_code(const train::TrainSummary& s) {
  return s.stop_signal ? 128 + s.stop_signal : 0;
}

void print_summary(const train::TrainSummary& s, int world) {
  const char* per = world > 1 ? " per rank" : "";
  std::printf("\n%-22s %s\n", "steps", std::to_string(s.steps).c_str());
  std::printf("%-22s %s\n", str("tokens", per).c_str(), std::to_string(s.tokens).c_str());
  std::printf("%-22s %s -> %s\n", "loss (first -> last)", fmt("%.4f", s.first_loss).c_str(),
              fmt("%.4f", s.last_loss).c_str());
  std::printf("%-22s %s s\n", "time", fmt("%.1f", s.seconds).c_str());
  if (world > 1)
    std::printf("%-22s %s\n", "tokens/s (all ranks)", fmt("%.0f", s.tokens_per_s * world).c_str());
  std::printf("%-22s %s\n", "tokens/s per GPU", fmt("%.0f", s.tokens_per_s).c_str());
  std::printf("%-22s %s\n", "MFU", train::format_mfu(s.mfu).c_str());
  std::printf("%-22s %s GiB\n", "peak memory", fmt("%.3f", s.peak_mem_gib).c_str());
  if (!s.attention.empty())  // cudnn: cuDNN's fused flash attention; native: zerotrain's kernels
    std::printf("%-22s %s%s\n", "attention", s.attention.c_str(),
                s.attention == "cpu" ? "" : " (ZT_ATTENTION=auto|cudnn|native chooses)");
  std::printf("%-22s stage %d%s: params %s, grads %s, optimizer %s MiB per rank\n",
              "ZeRO model state", s.zero_stage,
              s.shard_group > 0 ? str(" sharded in groups of ", s.shard_group, " ranks, ",
                                      world / s.shard_group, " replicas (hybrid)")
                                      .c_str()
                                : "",
              fmt("%.2f", static_cast<double>(s.param_bytes) / (1 << 20)).c_str(),
              fmt("%.2f", static_cast<double>(s.grad_bytes) / (1 << 20)).c_str(),
              fmt("%.2f", static_cast<double>(s.optimizer_bytes) / (1 << 20)).c_str());
  if (!s.zero_init.empty())
    std::printf("%-22s each rank built only its parameter shards, from %s\n", "zero.Init",
                s.zero_init.c_str());
  if (s.skipped_steps > 0 || s.loss_scale != 1.0)
    std::printf("%-22s %s (gradient overflow); final loss scale %s\n", "steps skipped",
                std::to_string(s.skipped_steps).c_str(), fmt("%g", s.loss_scale).c_str());
  std::printf("%-22s %s s from launch to the first step\n", "start-up",
              fmt("%.1f", s.startup_seconds).c_str());
  std::printf("%-22s %s\n", "memory at start", train::format_memory_report(s.memory_start).c_str());
  std::printf("%-22s step %lld: %s\n", "memory at peak", static_cast<long long>(s.memory_peak.step),
              train::format_memory_report(s.memory_peak).c_str());
  if (!s.evals.empty()) {
    const monitor::EvalMetrics& e = s.evals.back();
    std::printf("%-22s %s (perplexity %s) after step %lld; %zu evaluations, %s s in all\n",
                "eval loss", fmt("%.4f", e.loss).c_str(), fmt("%.4g", e.perplexity).c_str(),
                static_cast<long long>(e.step), s.evals.size(),
                fmt("%.1f", s.eval_seconds).c_str());
  }
  std::printf("%-22s %s\n", "started from", s.init.c_str());
  std::printf("%-22s %s\n", "model", s.model_dir.string().c_str());
  std::printf("%-22s %s\n", "checkpoint", s.checkpoint_dir.string().c_str());
  if (s.checkpoint_saves > 0) {
    const double gb = static_cast<double>(s.checkpoint_bytes) / 1e9;
    std::printf("%-22s %d saved, %s GB per save on this rank; training blocked %s s in all for "
                "the copies to host memory (%s s at the last save) and %s s for earlier saves "
                "still writing (or the first save's buffers still being made); files written in %s s (%s GB/s)\n",
                "checkpoint saves", s.checkpoint_saves,
                fmt("%.3f", gb / s.checkpoint_saves).c_str(),
                fmt("%.3f", s.checkpoint_blocked_s).c_str(),
                fmt("%.3f", s.checkpoint_last_blocked_s).c_str(),
                fmt("%.3f", s.checkpoint_waited_s).c_str(), fmt("%.3f", s.checkpoint_write_s).c_str(),
                fmt("%.2f", s.checkpoint_write_s > 0 ? gb / s.checkpoint_write_s : 0.0).c_str());
  }
  if (s.examples_cut > 0)
    std::printf("%-22s %llu examples longer than --seq-len + 1 tokens were cut to fit a row "
                "(--packing off)\n",
                "examples cut", static_cast<unsigned long long>(s.examples_cut));
  if (s.resume_load_s > 0)
    std::printf("%-22s this rank's shard read in %s s\n", "resumed", fmt("%.3f", s.resume_load_s).c_str());
  std::printf("%-22s %s\n", "metrics", s.metrics_path.string().c_str());
  std::printf("%-22s %s\n", "metrics (CSV)", s.csv_path.string().c_str());
  if (!s.csv_monitor_dir.empty())
    std::printf("%-22s %s\n", "csv_monitor", s.csv_monitor_dir.string().c_str());
  if (!s.tensorboard_file.empty())
    std::printf("%-22s %s\n", "tensorboard", s.tensorboard_file.string().c_str());
  if (!s.wandb_run_dir.empty())
    std::printf("%-22s %s (upload: wandb sync %s)\n", "wandb (offline)",
                s.wandb_run_dir.string().c_str(), s.wandb_run_dir.string().c_str());
  std::printf("%-22s %s\n", "loss/throughput plot", s.plot_path.string().c_str());
}

// The log line of one evaluation.
std::string eval_line(const monitor::EvalMetrics& e, bool eval_only) {
  return str(eval_only ? str("eval at step ", e.step) : str("eval after step ", e.step), " | loss ", fmt("%.4f", e.loss), " | perplexity ",
             fmt("%.4g", e.perplexity), " | ", e.tokens, " tokens of ", e.sequences,
             " sequences | ", fmt("%.1f", e.seconds), " s");
}

// Replaces this process with `zerotrain launch -n N [--mpi] -- zerotrain <args without --nproc>`.
// stop_grace_s: the ranks' --stop-grace; the launcher waits a little longer before SIGKILL.
[[noreturn]] void relaunch(const std::vector<std::string>& args, int nproc, bool cpu,
                           double stop_grace_s) {
  std::vector<std::string> argv{"/proc/self/exe", "launch",       "-n",
                                std::to_string(nproc), "--stop-grace", fmt("%.0f", stop_grace_s + 30)};
  if (cpu) argv.push_back("--mpi");  // CPU ranks reduce through MPI
  argv.push_back("--");
  argv.push_back("/proc/self/exe");
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--nproc") {
      ++i;
      continue;
    }
    if (args[i].rfind("--nproc=", 0) == 0) continue;
    argv.push_back(args[i]);
  }
  std::vector<char*> cargv;
  for (std::string& a : argv)
    cargv.push_back(a.data());
  cargv.push_back(nullptr);
  ::execv("/proc/self/exe", cargv.data());
  throw BackendError("train", str("cannot re-run under zerotrain launch: execv failed"));
}

// A --gpu-memory-cap / --host-memory-cap value in bytes (0: not given).
size_t memory_cap(const std::string& text, const char* option) {
  if (text.empty()) return 0;
  try {
    return static_cast<size_t>(estimate::parse_size(text, option));
  } catch (const ValueError& e) {
    throw ValueError("train", std::string(e.what()).substr(e.component().size() + 3));
  }
}

// Applies the caps to the run device's allocators (see [Note: caching allocator]).
void apply_memory_caps(const std::string& gpu, const std::string& host, Device device) {
  if (const size_t cap = memory_cap(gpu, "--gpu-memory-cap")) {
    if (!device.is_cuda())
      throw ValueError("train", str("--gpu-memory-cap ", gpu, ": the run is on ", to_string(device),
                                    " (use --host-memory-cap for a CPU run)"));
    set_cuda_memory_cap(device.index, cap);
  }
  if (const size_t cap = memory_cap(host, "--host-memory-cap")) set_cpu_memory_cap(cap);
}

// Resolves the ds_config against the command line and maps it onto `c` (ds_train_config.h).
void apply_deepspeed(const std::filesystem::path& file, const config::GivenFlags& given,
                     train::TrainConfig& c) {
  const std::filesystem::path model_config =
      std::filesystem::is_directory(c.paths.model) ? c.paths.model / "config.json" : c.paths.model;
  const int64_t hidden = io::read_hf_config(model_config).hidden_size;
  const config::LoadedConfig loaded =
      config::load_ds_config(file, train::train_overrides(c, given, hidden));
  for (const std::string& w : loaded.warnings)
    std::fprintf(stderr, "%s\n", w.c_str());
  train::apply_ds_config(loaded.config, given, c);
  c.paths.ds_config = file;
}

}  // namespace

void add_train_command(CLI::App& app, std::function<int()>& action,
                       const std::vector<std::string>& args) {
  auto* cmd = app.add_subcommand(
      "train",
      "Train a causal language model on a token file (one process or data-parallel ranks)");
  auto c = std::make_shared<train::TrainConfig>();
  auto device = std::make_shared<std::string>(cuda_available() ? "cuda" : "cpu");
  auto dtype = std::make_shared<std::string>("f32");
  auto grad_accum_dtype = std::make_shared<std::string>("f32");
  auto comm_dtype = std::make_shared<std::string>("f32");
  auto precision = std::make_shared<std::string>("mixed");
  auto deepspeed = std::make_shared<std::string>();
  auto gpu_cap = std::make_shared<std::string>();
  auto host_cap = std::make_shared<std::string>();
  cmd->add_option("--model", c->paths.model,
                  "Hugging Face model directory with its weights, or a config.json for a random "
                  "init")
      ->required();
  cmd->add_option_function<std::string>(
         "--init", [c](const std::string& v) { c->paths.init = io::parse_model_init(v); },
         "pretrained (the model directory's weights; default for a directory) or random (a "
         "seeded random init from its config.json; default for a config.json)")
      ->check(CLI::IsMember({"pretrained", "random"}));
  // --data and --out are required unless --eval-only (checked in the callback).
  cmd->add_option("--data", c->paths.data, "token file from `zerotrain data prepare`")
      ->check(CLI::ExistingFile);
  cmd->add_option("--out", c->paths.out,
                  "output directory (model/, checkpoints/, metrics.jsonl, metrics.csv, loss.png)");
  cmd->add_option("--eval-data", c->eval.data,
                  "held-out token file (`zerotrain data prepare`, same tokenizer): its validation "
                  "loss and perplexity after every --eval-every steps and after the last, in the "
                  "log, metrics.jsonl, the monitors and loss.png; the ranks share its sequences")
      ->check(CLI::ExistingFile);
  cmd->add_option_function<int64_t>(
      "--eval-every", [c](int64_t v) { c->eval.every = v; },
      "evaluate --eval-data after every N optimizer steps (default: after the last step only)");
  cmd->add_option_function<int64_t>(
      "--eval-batches", [c](int64_t v) { c->eval.batches = v; },
      "evaluate only the first K micro-batches of --eval-data, in file order (K x --micro-batch "
      "sequences at any number of ranks; default: every sequence of the file)");
  cmd->add_flag("--eval-only", c->eval.only,
                "evaluate --eval-data once on the --model weights (or the --resume checkpoint) "
                "and exit: no training, no checkpoint, no --data or --out needed");
  cmd->add_option(
         "--resume", c->paths.resume,
         "continue from a checkpoint (<out>/checkpoints/step-N, or an earlier run's --out for its "
         "latest) up to --steps in all, at any world size or ZeRO stage; the model, --dtype, "
         "--precision, --seq-len, --seed and the global batch (micro-batch x grad-accum x ranks) "
         "must match it")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--steps", c->steps,
                  "optimizer steps in all (a resumed run counts its earlier steps)")
      ->capture_default_str();
  cmd->add_option("--micro-batch", c->data.micro_batch, "sequences per micro-batch")
      ->capture_default_str();
  cmd->add_option("--seq-len", c->data.seq_len, "tokens per sequence")->capture_default_str();
  cmd->add_option("--grad-accum", c->data.grad_accum, "micro-batches per optimizer step")
      ->capture_default_str();
  cmd->add_option("--lr", c->schedule.lr, "peak learning rate")->capture_default_str();
  cmd->add_option("--warmup", c->schedule.warmup_steps, "linear warmup steps")
      ->capture_default_str();
  cmd->add_option("--schedule", c->schedule.decay, "constant, linear or cosine decay after warmup")
      ->capture_default_str();
  cmd->add_option("--min-lr-ratio", c->schedule.min_lr_ratio, "cosine floor as a fraction of --lr")
      ->capture_default_str();
  cmd->add_option("--weight-decay", c->optimizer.weight_decay, "weight decay (weights only)")
      ->capture_default_str();
  auto wd_mode = std::make_shared<std::string>("decoupled");
  cmd->add_option("--weight-decay-mode", *wd_mode,
                  "decoupled: AdamW (p *= 1 - lr wd); l2: torch.optim.Adam, wd p added to the "
                  "gradient (DeepSpeed's adam_w_mode false)")
      ->check(CLI::IsMember({"decoupled", "l2"}))
      ->capture_default_str();
  cmd->add_flag("--amsgrad", c->optimizer.amsgrad,
                "Adam's amsgrad: divide by the running max of v (a third f32 state, "
                "4 more bytes per parameter; not with --precision low)");
  cmd->add_flag(
      "--no-bias-correction", [c](int64_t) { c->optimizer.bias_correction = false; },
      "Adam without bias correction of the moments (DeepSpeed's bias_correction false)");
  cmd->add_option("--clip", c->clip, "global gradient-norm clipping (0: off)")
      ->check(non_negative())
      ->capture_default_str();
  cmd->add_option("--seed", c->data.seed, "seed for the init and the data order")
      ->capture_default_str();
  cmd->add_option_function<std::string>(
         "--packing", [c](const std::string& v) { c->data.packing = v == "on"; },
         "on: examples of a chat token file packed into rows, attention kept inside each (the "
         "default); off: one example per row, padded (longer ones cut, counted)")
      ->check(CLI::IsMember({"on", "off"}))
      ->default_str("on");
  cmd->add_option("--device", *device, "cpu, cuda or cuda:N")->capture_default_str();
  cmd->add_option("--dtype", *dtype,
                  "f32, bf16 or f16 (also fp16) (16-bit compute, f32 masters unless "
                  "--precision low; f16 with DeepSpeed's dynamic loss scaling)")
      ->check(CLI::IsMember({"f32", "bf16", "f16", "fp16"}))
      ->capture_default_str();
  cmd->add_option("--precision", *precision,
                  "with --dtype bf16: mixed keeps f32 master weights and moments (DeepSpeed); "
                  "low steps the bf16 weights in place with bf16 moments, no masters (FSDP's "
                  "low-precision mode: 4 instead of 12 optimizer bytes per parameter; updates "
                  "below bf16 resolution vanish and a warning says so)")
      ->check(CLI::IsMember({"mixed", "low"}))
      ->capture_default_str();
  cmd->add_option("--grad-accum-dtype", *grad_accum_dtype,
                  "dtype gradients accumulate in over micro-steps: f32, or --dtype's bf16/f16 "
                  "(data_types.grad_accum_dtype)")
      ->check(CLI::IsMember({"f32", "bf16", "f16"}))
      ->capture_default_str();
  cmd->add_option("--comm-dtype", *comm_dtype,
                  "dtype gradients are summed in across ranks: f32, bf16 or f16 "
                  "(communication_data_type)")
      ->check(CLI::IsMember({"f32", "bf16", "f16"}))
      ->capture_default_str();
  cmd->add_option("--beta1", c->optimizer.beta1, "AdamW beta1")->capture_default_str();
  cmd->add_option("--beta2", c->optimizer.beta2, "AdamW beta2")->capture_default_str();
  cmd->add_option("--eps", c->optimizer.eps, "AdamW epsilon")->capture_default_str();
  cmd->add_option("--deepspeed", *deepspeed,
                  "a DeepSpeed ds_config.json: its batch sizes, clipping, bf16/fp16, Adam/AdamW "
                  "settings (adam_w_mode, amsgrad, bias_correction too), scheduler, "
                  "steps_per_print, wall_clock_breakdown, csv_monitor, "
                  "tensorboard, wandb, activation_checkpointing, communication_data_type, "
                  "data_types.grad_accum_dtype and zero_optimization (stage, reduce_bucket_size, "
                  "overlap_comm, stage3_*, sub_group_size, offload_optimizer, offload_param) "
                  "apply; \"auto\" takes the flags' "
                  "values; a flag given explicitly must agree with the file and fills a key it "
                  "leaves out; settings train cannot "
                  "run yet are errors (check a file with `zerotrain config check`)");
  cmd->add_flag("--wall-clock-breakdown", c->reporting.wall_clock_breakdown,
                "log forward/backward/comm/step milliseconds per step (synchronizes the device at "
                "each phase; DeepSpeed's wall_clock_breakdown)");
  cmd->add_option("--tensorboard", c->reporting.tensorboard_dir,
                  "also write a TensorBoard event file in DIR (DeepSpeed's tags: "
                  "Train/Samples/train_loss, lr, ...; `tensorboard --logdir DIR` shows it)");
  cmd->add_flag("--activation-checkpointing", c->activation_checkpointing,
                "recompute each layer's activations in backward (less memory, ~1/3 more compute)");
  cmd->add_option("--log-every", c->reporting.log_every, "steps between log lines")
      ->capture_default_str();
  cmd->add_option("--plot-every", c->reporting.plot_every,
                  "also redraw loss.png every N steps (0: at the end)")
      ->check(non_negative())
      ->capture_default_str();
  auto nproc = std::make_shared<int>(1);
  cmd->add_option("--nproc", *nproc,
                  "data-parallel ranks on this machine (runs the command under `zerotrain launch`; "
                  "one GPU each with --device cuda)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  cmd->add_option("--reduce-bucket-size", c->zero.reduce_bucket_elements,
                  "gradient elements per data-parallel all-reduce bucket")
      ->capture_default_str();
  cmd->add_option("--zero-stage", c->zero.stage,
                  "ZeRO stage: 0 replicates everything, 1 shards the optimizer state, 2 also the "
                  "gradients, 3 also the parameters (same losses and weights in every stage)")
      ->capture_default_str();
  cmd->add_option("--stage3-persistence-threshold", c->zero.persistence_threshold,
                  "ZeRO stage 3: blocks with fewer parameter elements stay gathered between uses")
      ->capture_default_str();
  cmd->add_option("--stage3-prefetch-bucket-size", c->zero.prefetch_elements,
                  "ZeRO stage 3: parameter elements gathered ahead of the running block at most")
      ->capture_default_str();
  cmd->add_flag(
      "--no-zero-init", [c](int64_t) { c->zero.zero_init = false; },
      "ZeRO stage 3: build the full model on every rank, then shard it (default: "
      "zero.Init, each rank builds only its shards)");
  cmd->add_option("--stage3-max-live-parameters", c->zero.max_live_elements,
                  "ZeRO stage 3: gathered parameter elements at most while prefetching")
      ->capture_default_str();
  auto offload = std::make_shared<train::OffloadFlags>();
  cmd->add_option("--offload-optimizer", offload->optimizer,
                  "where the optimizer state (f32 masters, moments) lives and is stepped, ZeRO "
                  "stages 1-3: none (the GPU), cpu (host memory, DeepSpeed's CPU Adam's place) or "
                  "nvme (swap files under --nvme-path); zero_optimization.offload_optimizer.device")
      ->check(CLI::IsMember({"none", "cpu", "nvme"}))
      ->capture_default_str();
  cmd->add_option("--offload-param", offload->params,
                  "where the parameter shards live, ZeRO stage 3: none, cpu or nvme "
                  "(zero_optimization.offload_param.device)")
      ->check(CLI::IsMember({"none", "cpu", "nvme"}))
      ->capture_default_str();
  cmd->add_option("--nvme-path", offload->nvme_path,
                  "with an nvme offload: the directory (on a fast local disk) the run's swap "
                  "files are made in (offload_*.nvme_path)");
  cmd->add_flag("--pin-memory", offload->pin_memory,
                "page-locked host memory for what is offloaded (faster copies; "
                "offload_*.pin_memory)");
  cmd->add_option("--sub-group-size", offload->sub_group_size,
                  "with offload: parameter elements the host optimizer steps as one unit while "
                  "the next unit's copies are in flight (zero_optimization.sub_group_size)")
      ->capture_default_str();
  cmd->add_option("--check-params-every", c->check_params_every,
                  "data-parallel: compare the ranks' parameter checksums every N steps (0: at "
                  "start only)")
      ->capture_default_str();
  cmd->add_option("--save-every", c->reporting.save_every,
                  "also write a checkpoint <out>/checkpoints/step-N every N steps (0: only at the "
                  "end); each rank writes its own shard")
      ->capture_default_str();
  cmd->add_option("--keep-checkpoints", c->reporting.keep_checkpoints,
                  "keep the newest K complete checkpoints (an older one is deleted only once a "
                  "newer one is complete)")
      ->capture_default_str();
  cmd->add_flag("--checkpoint-weights", c->reporting.checkpoint_weights,
                "every checkpoint also holds the model's Hugging Face weights in the training "
                "dtype (<checkpoint>/model), gathered one block at a time (a ds_config's "
                "stage3_gather_16bit_weights_on_model_save)");
  cmd->add_flag("!--sync-save", c->reporting.async_save,
                "write checkpoints before training goes on (default: training waits only for the "
                "copy to host memory; the files are written in the background)");
  auto on_nonfinite = std::make_shared<std::string>("stop");
  cmd->add_option("--on-nonfinite", *on_nonfinite,
                  "f32/bf16: a step whose gradients hold NaN/Inf stops the run naming the first "
                  "such parameter (stop) or is skipped (skip; the default with a ds_config's "
                  "bf16.check_grad_overflow); a non-finite loss always stops; fp16's loss scaler "
                  "skips overflows itself")
      ->capture_default_str();
  cmd->add_option("--stop-grace", c->faults.stop_grace_s,
                  "seconds a run has after SIGTERM/SIGINT to finish its step and save a "
                  "checkpoint; then, or on a second signal, it exits without saving")
      ->capture_default_str();
  cmd->add_option("--gpu-memory-cap", *gpu_cap,
                  "cap what the GPU allocator may reserve (24GiB, 24GB, 24 = GiB), to rehearse a "
                  "smaller GPU; a run that does not fit stops with what it needed and what fits");
  cmd->add_option("--host-memory-cap", *host_cap,
                  "cap the tensor memory of the host allocator (sizes as --gpu-memory-cap), to "
                  "rehearse a smaller machine with --device cpu");
  auto sample = std::make_shared<SampleOptions>();
  add_sample_options(*cmd, *sample);
  cmd->footer(
      "Examples:\n"
      "  zerotrain train --model assets/models/kjv-llama-4m/config.json --data data/kjv.tokens "
      "--out runs/kjv\n"
      "  zerotrain train --model ./Llama-3.2-1B --data tokens.bin --out runs/ft --device cuda "
      "--dtype bf16 \\\n"
      "      --micro-batch 2 --seq-len 4096 --lr 1e-5 --steps 1000 --activation-checkpointing\n"
      "  zerotrain train --model assets/models/kjv-llama-4m/config.json --data data/kjv.tokens "
      "--out runs/kjv "
      "\\\n"
      "      --resume runs/kjv --steps 1000   # its latest checkpoint\n"
      "  zerotrain train --model config.json --data tokens.bin --out runs/ddp --nproc 4 --device "
      "cuda --dtype bf16\n"
      "  mpirun -n 4 zerotrain train --model config.json --data tokens.bin --out runs/ddp --device "
      "cpu\n"
      "  zerotrain train --model assets/models/kjv-llama-4m/config.json --data data/kjv.tokens "
      "--out runs/ds "
      "\\\n"
      "      --deepspeed ds_config.json --lr 3e-4\n"
      "  zerotrain train --model config.json --data tokens.bin --out runs/prof --device cuda "
      "--wall-clock-breakdown\n"
      "  zerotrain train --model assets/models/gpt2-xl/config.json --data tokens.bin --out runs/xl "
      "--device cuda "
      "--dtype bf16 \\\n"
      "      --micro-batch 1 --seq-len 1024 --gpu-memory-cap 24GiB   # says what fits 24 GiB\n"
      "  zerotrain train --model assets/models/gpt2-xl/config.json --data tokens.bin --out "
      "runs/xl-offload \\\n"
      "      --device cuda --dtype bf16 --micro-batch 16 --seq-len 1024 --zero-stage 3 \\\n"
      "      --offload-optimizer cpu --offload-param cpu --pin-memory   # ZeRO-3 offload\n"
      "  zerotrain train --model config.json --data tokens.bin --out runs/nvme --device cuda "
      "--dtype bf16 \\\n"
      "      --zero-stage 3 --offload-optimizer nvme --nvme-path /local_nvme   # ZeRO-Infinity\n"
      "  zerotrain train --model config.json --data tokens.bin --out runs/lowp --device cuda "
      "--dtype bf16 \\\n"
      "      --precision low --lr 1e-3 --zero-stage 3 --nproc 8\n"
      "  zerotrain train --model ./Llama-3.2-1B --data train.bin --eval-data valid.bin --eval-every "
      "100 --out runs/ft\n"
      "  zerotrain train --model runs/ft/model --eval-only --eval-data valid.bin   # just the "
      "validation loss\n"
      "\n"
      "Writes <out>/metrics.jsonl and metrics.csv (one row per logged step), loss.png (loss and\n"
      "tokens/s; redrawn at each checkpoint), model/ and checkpoints/ (`zerotrain checkpoint --help`).\n"
      "With --eval-data, each evaluation adds a {\"type\":\"eval\",...} line to metrics.jsonl,\n"
      "Eval/Samples/eval_loss and eval_perplexity to the monitors and a second curve to loss.png.\n"
      "With --deepspeed, a "
      "scheduler\n"
      "section replaces --schedule/--warmup (DeepSpeed's formulas; without one --schedule "
      "applies),\n"
      "csv_monitor writes DeepSpeed's per-metric CSV files, tensorboard its event file (as\n"
      "--tensorboard DIR does), wandb an offline run in <out>/wandb (`wandb sync` uploads it),\n"
      "wall_clock_breakdown = the flag. The offload flags fill the file's offload sections\n"
      "where it leaves them out and must agree where it sets them.");
  // The option strings live in shared_ptrs that the callbacks hold: CLI11 keeps references.
  cmd->callback([&action, c, device, dtype, grad_accum_dtype, comm_dtype, precision, wd_mode, nproc,
                 args, deepspeed, cmd, gpu_cap, host_cap, offload, sample, on_nonfinite] {
    if (!c->eval.only) {
      if (c->paths.data.empty()) throw CLI::RequiredError("--data");
      if (c->paths.out.empty()) throw CLI::RequiredError("--out");
    }
    action = [c, device, dtype, grad_accum_dtype, comm_dtype, precision, wd_mode, nproc, args,
              deepspeed, gpu_cap, host_cap, offload, sample, on_nonfinite,
              given = given_flags(*cmd)] {
      c->device = parse_device(*device);
      c->optimizer.decoupled_weight_decay = *wd_mode == "decoupled";
      c->precision.dtype = parse_dtype(*dtype);
      c->precision.grad_accum_dtype = parse_dtype(*grad_accum_dtype);
      c->precision.comm_dtype = parse_dtype(*comm_dtype);
      c->precision.mode = optim::parse_precision(*precision);
      c->faults.on_nonfinite = train::parse_nonfinite_policy(*on_nonfinite);
      const comm::ProcessEnv env = comm::detect_process_env();
      if (*nproc > 1 && env.world_size == 1)
        relaunch(args, *nproc, !c->device.is_cuda(), c->faults.stop_grace_s);
      if (*nproc > 1 && env.world_size != *nproc)
        throw ValueError("train", str("--nproc ", *nproc, " but the launcher started ",
                                      env.world_size, " ranks"));
      std::unique_ptr<comm::ProcessGroup> group;
      std::unique_ptr<comm::Communicator> device_comm;
      if (env.world_size > 1) {
        group = comm::init_process_group();
        if (c->device.is_cuda()) {
          c->device = group->local_device();  // one GPU per rank
          device_comm = group->make_device_communicator(c->device);
          c->comm = device_comm.get();
        } else {
          c->comm = &group->host();
        }
      }
      train::apply_offload_flags(*offload, c->zero);
      if (deepspeed->empty())
        train::check_offload_flags(c->zero, given);
      else
        apply_deepspeed(*deepspeed, given, *c);
      apply_memory_caps(*gpu_cap, *host_cap, c->device);
      // Before the header multiplies the batch sizes (train() checks them again, for library use).
      train::validate_train_config(*c);
      // Before anything is built: the swap directory exists, is writable and has room.
      train::check_nvme_paths(*c, env.world_size);
      const bool rank0 = env.rank == 0;
      const bool many_ranks = env.world_size > 1;
      if (!rank0) return stop_exit_code(run_rank(many_ranks, [&] { return train::train(*c); }));
      if (c->eval.only) {
        std::printf("zerotrain train --eval-only: %s on %s%s, %s, seq_len %lld, micro-batch %lld\n",
                    (c->paths.resume.empty() ? c->paths.model : c->paths.resume).string().c_str(),
                    to_string(c->device).c_str(),
                    env.world_size > 1 ? str(" x ", env.world_size, " ranks").c_str() : "",
                    std::string(dtype_name(c->precision.dtype)).c_str(),
                    static_cast<long long>(c->data.seq_len),
                    static_cast<long long>(c->data.micro_batch));
        std::fflush(stdout);  // before a refusal on stderr
        train::TrainCallbacks cb;
        cb.on_eval_set = [c](const std::string& set) {
          std::printf("eval data: %s, %s\n", c->eval.data.string().c_str(), set.c_str());
        };
        cb.on_eval = [](const monitor::EvalMetrics& e) {
          std::printf("%s\n", eval_line(e, true).c_str());
        };
        const train::TrainSummary s = run_rank(many_ranks, [&] { return train::train(*c, cb); });
        std::printf("%-22s %s\n", "evaluated", s.init.c_str());
        return 0;
      }
      // Gradient dtypes are named only when they differ from f32 (zero/grad_comm.h).
      std::string dtypes(dtype_name(c->precision.dtype));
      if (c->precision.mode == optim::Precision::low) dtypes += " low precision";
      if (c->precision.grad_accum_dtype != DType::f32)
        dtypes += str(", ", dtype_name(c->precision.grad_accum_dtype), " gradients");
      if (c->precision.comm_dtype != DType::f32 && env.world_size > 1)
        dtypes += str(", reduced in ", dtype_name(c->precision.comm_dtype));
      std::string optimizer = c->optimizer.decoupled_weight_decay ? "AdamW" : "Adam with L2 decay";
      if (c->optimizer.amsgrad) optimizer += " amsgrad";
      if (c->optimizer.kind != optim::OptimizerKind::adam)
        optimizer = optim::optimizer_kind_name(c->optimizer.kind);
      if (c->optimizer.kind == optim::OptimizerKind::sgd && c->optimizer.momentum != 0)
        optimizer += str(c->optimizer.nesterov ? " Nesterov" : "", " momentum ",
                         c->optimizer.momentum);
      if (!c->optimizer.bias_correction && c->optimizer.kind != optim::OptimizerKind::lion &&
          c->optimizer.kind != optim::OptimizerKind::sgd)
        optimizer += " without bias correction";
      std::printf("zerotrain train: %s on %s%s, %s, %s, %lld steps x %lld x %lld tokens\n",
                  c->paths.model.string().c_str(), to_string(c->device).c_str(),
                  env.world_size > 1 ? str(" x ", env.world_size, " ranks").c_str() : "",
                  dtypes.c_str(), optimizer.c_str(), static_cast<long long>(c->steps),
                  static_cast<long long>(c->data.micro_batch * c->data.grad_accum * env.world_size),
                  static_cast<long long>(c->data.seq_len));
      ProgressOptions po;
      po.unit = "step";
      ProgressBar bar("train", static_cast<uint64_t>(c->steps), po);
      train::TrainCallbacks cb;
      cb.on_eval_set = [c](const std::string& set) {
        std::printf("eval data: %s, %s, %s\n", c->eval.data.string().c_str(), set.c_str(),
                    c->eval.every ? str("after every ", *c->eval.every, " steps and the last").c_str()
                                  : "after the last step");
        std::fflush(stdout);
      };
      cb.on_eval = [&bar](const monitor::EvalMetrics& e) {
        if (bar.is_tty()) std::fputs("\r\033[K", stderr);
        std::printf("%s\n", eval_line(e, false).c_str());
        std::fflush(stdout);
      };
      cb.on_memory_start = [](const train::MemoryReport& m) {
        std::printf("memory at start (rank 0): %s\n", train::format_memory_report(m).c_str());
        std::printf("start-up (rank 0): %.1f s from launch to the first step\n",
                    seconds_since_process_start());
        std::fflush(stdout);
      };
      auto last_rate = std::make_shared<double>(0.0);
      cb.on_log = [&bar, last_rate](const monitor::StepMetrics& m) {
        *last_rate = m.tokens_per_s;
        if (bar.is_tty()) std::fputs("\r\033[K", stderr);
        std::string line =
            str("step ", fmt("%6.0f", static_cast<double>(m.step)), " | loss ", fmt("%.4f", m.loss),
                " | grad norm ", fmt("%.3f", m.grad_norm), " | lr ", fmt("%.2e", m.lr), " | ",
                fmt("%.0f", m.tokens_per_s), " tok/s");
        if (m.world_size > 1) line += str(" (", fmt("%.0f", m.tokens_per_s_per_gpu), "/GPU)");
        if (m.loss_scaling)
          line += str(" | scale ", fmt("%g", m.loss_scale),
                      m.skipped ? str(" (", m.skipped, " skipped)") : "");
        line += str(" | MFU ", train::format_mfu(m.mfu), " | mem ", fmt("%.2f", m.peak_mem_gib),
                    " GiB");
        if (m.host_memory) line += str(" | rss ", fmt("%.2f", m.host_memory->rss), " GiB");
        if (m.wall_clock)
          line +=
              str(" | ms fwd ", fmt("%.1f", m.wall_clock->forward_ms), " bwd ",
                  fmt("%.1f", m.wall_clock->backward_ms), " comm ",
                  fmt("%.1f", m.wall_clock->comm_ms), " step ", fmt("%.1f", m.wall_clock->step_ms));
        std::printf("%s\n", line.c_str());
        std::fflush(stdout);
      };
      cb.on_step = [&bar, last_rate](int64_t done, int64_t, double loss) {
        if (!bar.is_tty()) return;  // off a terminal the log lines are the progress
        bar.set_suffix(*last_rate > 0 ? fmt("loss %.3f", loss) + fmt("  %.0f tok/s", *last_rate)
                                      : fmt("loss %.3f", loss));
        bar.update(static_cast<uint64_t>(done));
      };
      const train::TrainSummary s = run_rank(many_ranks, [&] { return train::train(*c, cb); });
      if (bar.is_tty()) bar.finish();
      if (s.stop_signal) {
        print_stop_line(s, c->paths.out);
        return stop_exit_code(s);
      }
      print_summary(s, env.world_size);
      print_training_sample(*sample, c->paths.model, s.model_dir, c->device, c->precision.dtype);
      return 0;
    };
  });
}

}  // namespace zt::cli
