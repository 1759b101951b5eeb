// `zerotrain train`'s options (train_flags.h): one function per run of options that --help lists
// together, registered in the order it lists them.
#include "zerotrain/cli/train_flags.h"

#include "zerotrain/cli/accelerate_launch.h"
#include "zerotrain/cli/command_line_guards.h"
#include "zerotrain/config/zero_key_table.h"
#include "zerotrain/io/model_source.h"
#include "zerotrain/optim/precision.h"
#include "zerotrain/train/fault_config.h"

namespace zt::cli {

namespace {

// A zero_optimization key's flag, bound to `target`, with its help text (config/zero_key_table.h)
// and its default shown.
template <typename T>
CLI::Option* zero_key_option(CLI::App& cmd, std::string_view path, T& target) {
  const config::ZeroKey& k = config::zero_key(path);
  return cmd.add_option(std::string(k.flag), target, std::string(k.help))->capture_default_str();
}

// The model, the data, the evaluation and the checkpoint to resume.
void add_input_flags(CLI::App& cmd, TrainFlags& flags) {
  train::TrainConfig& c = flags.config;
  cmd.add_option("--model", c.paths.model,
                 "Hugging Face model directory with its weights, or a config.json for a random "
                 "init")
      ->required();
  cmd.add_option_function<std::string>(
         "--init", [cfg = &c](const std::string& v) { cfg->paths.init = io::parse_model_init(v); },
         "pretrained (the model directory's weights; default for a directory) or random (a "
         "seeded random init from its config.json; default for a config.json)")
      ->check(CLI::IsMember({"pretrained", "random"}));
  // --data and --out are required unless --eval-only (checked in the callback).
  cmd.add_option("--data", c.paths.data, "token file from `zerotrain data prepare`")
      ->check(CLI::ExistingFile);
  cmd.add_option("--out", c.paths.out,
                 "output directory (model/, checkpoints/, metrics.jsonl, metrics.csv, loss.png)");
  cmd.add_option("--eval-data", c.eval.data,
                 "held-out token file (`zerotrain data prepare`, same tokenizer): its validation "
                 "loss and perplexity after every --eval-every steps and after the last, in the "
                 "log, metrics.jsonl, the monitors and loss.png; the ranks share its sequences")
      ->check(CLI::ExistingFile);
  cmd.add_option_function<int64_t>(
      "--eval-every", [cfg = &c](int64_t v) { cfg->eval.every = v; },
      "evaluate --eval-data after every N optimizer steps (default: after the last step only)");
  cmd.add_option_function<int64_t>(
      "--eval-batches", [cfg = &c](int64_t v) { cfg->eval.batches = v; },
      "evaluate only the first K micro-batches of --eval-data, in file order (K x --micro-batch "
      "sequences at any number of ranks; default: every sequence of the file)");
  cmd.add_flag("--eval-only", c.eval.only,
               "evaluate --eval-data once on the --model weights (or the --resume checkpoint) "
               "and exit: no training, no checkpoint, no --data or --out needed");
  cmd.add_option(
         "--resume", c.paths.resume,
         "continue from a checkpoint (<out>/checkpoints/step-N, or an earlier run's --out for its "
         "latest) up to --steps in all, at any world size or ZeRO stage; the model, --dtype, "
         "--precision, --seq-len, --seed and the global batch (micro-batch x grad-accum x ranks) "
         "must match it")
      ->check(CLI::ExistingDirectory);
}

// How long, in what batches, at what learning rate.
void add_schedule_flags(CLI::App& cmd, TrainFlags& flags) {
  train::TrainConfig& c = flags.config;
  cmd.add_option("--steps", c.steps,
                 "optimizer steps in all (a resumed run counts its earlier steps)")
      ->capture_default_str();
  cmd.add_option("--micro-batch", c.data.micro_batch, "sequences per micro-batch")
      ->capture_default_str();
  cmd.add_option("--seq-len", c.data.seq_len, "tokens per sequence")->capture_default_str();
  cmd.add_option("--grad-accum", c.data.grad_accum, "micro-batches per optimizer step")
      ->capture_default_str();
  cmd.add_option("--lr", c.schedule.lr, "peak learning rate")->capture_default_str();
  cmd.add_option("--warmup", c.schedule.warmup_steps, "linear warmup steps")->capture_default_str();
  cmd.add_option("--schedule", c.schedule.decay, "constant, linear or cosine decay after warmup")
      ->capture_default_str();
  cmd.add_option("--min-lr-ratio", c.schedule.min_lr_ratio, "cosine floor as a fraction of --lr")
      ->capture_default_str();
}

// Weight decay, Adam's variants and clipping.
void add_optimizer_flags(CLI::App& cmd, TrainFlags& flags) {
  train::TrainConfig& c = flags.config;
  cmd.add_option("--weight-decay", c.optimizer.weight_decay, "weight decay (weights only)")
      ->capture_default_str();
  cmd.add_option("--weight-decay-mode", flags.weight_decay_mode,
                 "decoupled: AdamW (p *= 1 - lr wd); l2: torch.optim.Adam, wd p added to the "
                 "gradient (DeepSpeed's adam_w_mode false)")
      ->check(CLI::IsMember({"decoupled", "l2"}))
      ->capture_default_str();
  cmd.add_flag("--amsgrad", c.optimizer.amsgrad,
               "Adam's amsgrad: divide by the running max of v (a third f32 state, "
               "4 more bytes per parameter; not with --precision low)");
  cmd.add_flag(
      "--no-bias-correction", [cfg = &c](int64_t) { cfg->optimizer.bias_correction = false; },
      "Adam without bias correction of the moments (DeepSpeed's bias_correction false)");
  cmd.add_option("--clip", c.clip, "global gradient-norm clipping (0: off)")
      ->check(non_negative())
      ->capture_default_str();
}

// The seed and how examples fill rows.
void add_data_order_flags(CLI::App& cmd, TrainFlags& flags) {
  train::TrainConfig& c = flags.config;
  cmd.add_option("--seed", c.data.seed, "seed for the init and the data order")
      ->capture_default_str();
  cmd.add_option_function<std::string>(
         "--packing", [cfg = &c](const std::string& v) { cfg->data.packing = v == "on"; },
         "on: examples of a chat token file packed into rows, attention kept inside each (the "
         "default); off: one example per row, padded (longer ones cut, counted)")
      ->check(CLI::IsMember({"on", "off"}))
      ->default_str("on");
}

// The device and the dtypes of compute, gradients and their reduction.
void add_precision_flags(CLI::App& cmd, TrainFlags& flags) {
  cmd.add_option("--device", flags.device, "cpu, cuda or cuda:N")->capture_default_str();
  cmd.add_option("--dtype", flags.dtype,
                 "f32, bf16 or f16 (also fp16) (16-bit compute, f32 masters unless "
                 "--precision low; f16 with DeepSpeed's dynamic loss scaling)")
      ->check(CLI::IsMember({"f32", "bf16", "f16", "fp16"}))
      ->capture_default_str();
  cmd.add_option("--precision", flags.precision,
                 "with --dtype bf16: mixed keeps f32 master weights and moments (DeepSpeed); "
                 "low steps the bf16 weights in place with bf16 moments, no masters (FSDP's "
                 "low-precision mode: 4 instead of 12 optimizer bytes per parameter; updates "
                 "below bf16 resolution vanish and a warning says so)")
      ->check(CLI::IsMember({"mixed", "low"}))
      ->capture_default_str();
  cmd.add_option("--grad-accum-dtype", flags.grad_accum_dtype,
                 "dtype gradients accumulate in over micro-steps: f32, or --dtype's bf16/f16 "
                 "(data_types.grad_accum_dtype)")
      ->check(CLI::IsMember({"f32", "bf16", "f16"}))
      ->capture_default_str();
  cmd.add_option("--comm-dtype", flags.comm_dtype,
                 "dtype gradients are summed in across ranks: f32, bf16 or f16 "
                 "(communication_data_type)")
      ->check(CLI::IsMember({"f32", "bf16", "f16"}))
      ->capture_default_str();
}

// Adam's betas and epsilon (listed after the precision flags in --help).
void add_adam_flags(CLI::App& cmd, TrainFlags& flags) {
  train::TrainConfig& c = flags.config;
  cmd.add_option("--beta1", c.optimizer.beta1, "AdamW beta1")->capture_default_str();
  cmd.add_option("--beta2", c.optimizer.beta2, "AdamW beta2")->capture_default_str();
  cmd.add_option("--eps", c.optimizer.eps, "AdamW epsilon")->capture_default_str();
}

// The ds_config, what is logged and drawn, and activation checkpointing (its place in
// --help).
void add_deepspeed_and_logging_flags(CLI::App& cmd, TrainFlags& flags) {
  train::TrainConfig& c = flags.config;
  cmd.add_option("--deepspeed", flags.deepspeed,
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
  cmd.add_option("--accelerate-config", flags.accelerate_config,
                 "an Accelerate config file (the YAML `accelerate config` writes): "
                 "distributed_type DEEPSPEED (its deepspeed_config keys or deepspeed_config_file), "
                 "FSDP (fsdp_config, as ZeRO stages), MULTI_GPU, MULTI_CPU or NO, with "
                 "mixed_precision, use_cpu and num_processes (the ranks, as --nproc); check one "
                 "with `zerotrain config check --accelerate-config FILE`; under `zerotrain launch "
                 "--config-file FILE` the ranks read it from " +
                     std::string(kAccelerateConfigEnv))
      ->envname(kAccelerateConfigEnv)
      ->check(CLI::ExistingFile);
  cmd.add_flag("--wall-clock-breakdown", c.reporting.wall_clock_breakdown,
               "log forward/backward/comm/step milliseconds per step (synchronizes the device at "
               "each phase; DeepSpeed's wall_clock_breakdown)");
  cmd.add_option("--tensorboard", c.reporting.tensorboard_dir,
                 "also write a TensorBoard event file in DIR (DeepSpeed's tags: "
                 "Train/Samples/train_loss, lr, ...; `tensorboard --logdir DIR` shows it)");
  cmd.add_flag("--activation-checkpointing", c.activation_checkpointing,
               "recompute each layer's activations in backward (less memory, ~1/3 more compute)");
  cmd.add_option("--log-every", c.reporting.log_every, "steps between log lines")
      ->capture_default_str();
  cmd.add_option("--plot-every", c.reporting.plot_every,
                 "also redraw loss.png every N steps (0: at the end)")
      ->check(non_negative())
      ->capture_default_str();
}

// The ranks and ZeRO's stage, buckets and stage-3 gathering.
void add_zero_flags(CLI::App& cmd, TrainFlags& flags) {
  train::TrainConfig& c = flags.config;
  cmd.add_option("--nproc", flags.nproc,
                 "data-parallel ranks on this machine (runs the command under `zerotrain launch`; "
                 "one GPU each with --device cuda)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  zero_key_option(cmd, "reduce_bucket_size", c.zero.reduce_bucket_size);
  zero_key_option(cmd, "stage", c.zero.stage);
  zero_key_option(cmd, "stage3_param_persistence_threshold", c.zero.param_persistence_threshold);
  zero_key_option(cmd, "stage3_prefetch_bucket_size", c.zero.prefetch_bucket_size);
  cmd.add_flag(
      "--no-zero-init", [cfg = &c](int64_t) { cfg->zero.zero_init = false; },
      "ZeRO stage 3: build the full model on every rank, then shard it (default: "
      "zero.Init, each rank builds only its shards)");
  zero_key_option(cmd, "stage3_max_live_parameters", c.zero.max_live_parameters);
}

// Where the optimizer state and the parameters live (ZeRO-Offload, ZeRO-Infinity).
void add_offload_flags(CLI::App& cmd, TrainFlags& flags) {
  const auto devices = CLI::IsMember({"none", "cpu", "nvme"});
  zero_key_option(cmd, "offload_optimizer.device", flags.offload.optimizer)->check(devices);
  zero_key_option(cmd, "offload_param.device", flags.offload.params)->check(devices);
  const config::ZeroKey& nvme = config::zero_key("offload_optimizer.nvme_path");
  cmd.add_option(std::string(nvme.flag), flags.offload.nvme_path, std::string(nvme.help));
  const config::ZeroKey& pin = config::zero_key("offload_optimizer.pin_memory");
  cmd.add_flag(std::string(pin.flag), flags.offload.pin_memory, std::string(pin.help));
  zero_key_option(cmd, "sub_group_size", flags.offload.sub_group_size);
}

// The data-parallel parameter check, then what is saved, how often and how.
void add_checkpoint_flags(CLI::App& cmd, TrainFlags& flags) {
  train::TrainConfig& c = flags.config;
  cmd.add_option("--check-params-every", c.check_params_every,
                 "data-parallel: compare the ranks' parameter checksums every N steps (0: at "
                 "start only)")
      ->capture_default_str();
  cmd.add_option("--save-every", c.reporting.save_every,
                 "also write a checkpoint <out>/checkpoints/step-N every N steps (0: only at the "
                 "end); each rank writes its own shard")
      ->capture_default_str();
  cmd.add_option("--keep-checkpoints", c.reporting.keep_checkpoints,
                 "keep the newest K complete checkpoints (an older one is deleted only once a "
                 "newer one is complete)")
      ->capture_default_str();
  cmd.add_flag("--checkpoint-weights", c.reporting.checkpoint_weights,
               "every checkpoint also holds the model's Hugging Face weights in the training "
               "dtype (<checkpoint>/model), gathered one block at a time (a ds_config's "
               "stage3_gather_16bit_weights_on_model_save)");
  cmd.add_flag("!--sync-save", c.reporting.async_save,
               "write checkpoints before training goes on (default: training waits only for the "
               "copy to host memory; the files are written in the background)");
}

// Non-finite steps, signals, and caps that rehearse a smaller machine.
void add_fault_and_memory_flags(CLI::App& cmd, TrainFlags& flags) {
  train::TrainConfig& c = flags.config;
  cmd.add_option("--on-nonfinite", flags.on_nonfinite,
                 "f32/bf16: a step whose gradients hold NaN/Inf stops the run naming the first "
                 "such parameter (stop) or is skipped (skip; the default with a ds_config's "
                 "bf16.check_grad_overflow); a non-finite loss always stops; fp16's loss scaler "
                 "skips overflows itself")
      ->capture_default_str();
  cmd.add_option("--stop-grace", c.faults.stop_grace_s,
                 "seconds a run has after SIGTERM/SIGINT to finish its step and save a "
                 "checkpoint; then, or on a second signal, it exits without saving")
      ->capture_default_str();
  cmd.add_option("--gpu-memory-cap", flags.gpu_memory_cap,
                 "cap what the GPU allocator may reserve (24GiB, 24GB, 24 = GiB), to rehearse a "
                 "smaller GPU; a run that does not fit stops with what it needed and what fits");
  cmd.add_option("--host-memory-cap", flags.host_memory_cap,
                 "cap the tensor memory of the host allocator (sizes as --gpu-memory-cap), to "
                 "rehearse a smaller machine with --device cpu");
}
const char* const kTrainFooter =
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
    "  zerotrain train --model config.json --data tokens.bin --out runs/acc --accelerate-config "
    "default_config.yaml\n"
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
    "tokens/s; redrawn at each checkpoint), model/ and checkpoints/ (`zerotrain checkpoint "
    "--help`).\n"
    "With --eval-data, each evaluation adds a {\"type\":\"eval\",...} line to metrics.jsonl,\n"
    "Eval/Samples/eval_loss and eval_perplexity to the monitors and a second curve to loss.png.\n"
    "With --deepspeed, a "
    "scheduler\n"
    "section replaces --schedule/--warmup (DeepSpeed's formulas; without one --schedule "
    "applies),\n"
    "csv_monitor writes DeepSpeed's per-metric CSV files, tensorboard its event file (as\n"
    "--tensorboard DIR does), wandb an offline run in <out>/wandb (`wandb sync` uploads it),\n"
    "wall_clock_breakdown = the flag. The offload flags fill the file's offload sections\n"
    "where it leaves them out and must agree where it sets them.";

}  // namespace

void add_train_flags(CLI::App& cmd, TrainFlags& flags) {
  add_input_flags(cmd, flags);
  add_schedule_flags(cmd, flags);
  add_optimizer_flags(cmd, flags);
  add_data_order_flags(cmd, flags);
  add_precision_flags(cmd, flags);
  add_adam_flags(cmd, flags);
  add_deepspeed_and_logging_flags(cmd, flags);
  add_zero_flags(cmd, flags);
  add_offload_flags(cmd, flags);
  add_checkpoint_flags(cmd, flags);
  add_fault_and_memory_flags(cmd, flags);
  add_sample_options(cmd, flags.sample);
  cmd.footer(kTrainFooter);
}

void apply_text_flags(TrainFlags& flags) {
  train::TrainConfig& c = flags.config;
  c.device = parse_device(flags.device);
  c.optimizer.adam_w_mode = flags.weight_decay_mode == "decoupled";
  c.precision.dtype = parse_dtype(flags.dtype);
  c.precision.grad_accum_dtype = parse_dtype(flags.grad_accum_dtype);
  c.precision.comm_dtype = parse_dtype(flags.comm_dtype);
  c.precision.mode = optim::parse_precision(flags.precision);
  c.faults.on_nonfinite = train::parse_nonfinite_policy(flags.on_nonfinite);
}

}  // namespace zt::cli
