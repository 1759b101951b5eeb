// train_overrides / apply_ds_config (see ds_train_config.h) and the list of DeepSpeed settings
// zerotrain train cannot run yet.
#include "zerotrain/train/ds_train_config.h"

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "zerotrain/core/error.h"
#include "zerotrain/train/train_scheduler.h"

namespace zt::train {

namespace {

using config::DsConfig;

// One setting zerotrain train cannot run yet: the key path, when the config asks for it, and why.
// Remove a row when the trainer gains the feature (and map it in apply_ds_config).
struct NotYet {
  const char* path;
  std::function<bool(const DsConfig&)> asks;
  const char* why;
};

const std::vector<NotYet>& not_yet() {
  static const std::vector<NotYet> list = {
      {"zero_optimization.offload_optimizer",
       [](const DsConfig& d) {
         const auto& o = d.zero_optimization.offload_optimizer;
         return o && o->device != config::OffloadDevice::none;
       },
       "optimizer offload"},
      {"zero_optimization.offload_param",
       [](const DsConfig& d) {
         const auto& p = d.zero_optimization.offload_param;
         return p && p->device != config::OffloadDevice::none;
       },
       "parameter offload"},
      {"fp16.fp16_master_weights_and_grads",
       [](const DsConfig& d) { return d.fp16.enabled && d.fp16.fp16_master_weights_and_grads; },
       "fp16 masters and gradients (masters and gradients are f32)"},
      {"amp.enabled", [](const DsConfig& d) { return d.amp.enabled; },
       "NVIDIA Apex AMP (use bf16)"},
      {"bf16.check_grad_overflow", [](const DsConfig& d) { return d.bf16.check_grad_overflow; },
       "bf16 overflow checks"},
      {"optimizer.type",
       [](const DsConfig& d) {
         return d.optimizer && d.optimizer->type != config::OptimizerType::adam &&
                d.optimizer->type != config::OptimizerType::adamw;
       },
       "optimizers other than Adam/AdamW"},
      {"scheduler.params.last_batch_iteration",
       [](const DsConfig& d) {
         return d.scheduler &&
                std::visit([](const auto& p) { return p.last_batch_iteration != -1; },
                           d.scheduler->params);
       },
       "starting a schedule part-way (use --resume DIR)"},
      {"activation_checkpointing.cpu_checkpointing",
       [](const DsConfig& d) { return d.activation_checkpointing.cpu_checkpointing; },
       "checkpoints offloaded to the CPU"},
      {"sparse_gradients", [](const DsConfig& d) { return d.sparse_gradients; },
       "sparse gradients"},
      {"checkpoint.load_universal", [](const DsConfig& d) { return d.checkpoint.load_universal; },
       "universal checkpoints (use --resume DIR)"},
      {"comet.enabled", [](const DsConfig& d) { return d.comet.enabled; },
       "Comet (zerotrain never contacts a service)"},
      {"flops_profiler.enabled", [](const DsConfig& d) { return d.flops_profiler.enabled; },
       "the flops profiler (train reports MFU)"},
      {"comms_logger.enabled", [](const DsConfig& d) { return d.comms_logger.enabled; },
       "the communication logger"},
      {"memory_breakdown", [](const DsConfig& d) { return d.memory_breakdown; },
       "memory breakdowns (train logs peak memory)"},
      {"dump_state", [](const DsConfig& d) { return d.dump_state; }, "state dumps"},
      {"bf16.bf16_master_weights_and_grads",
       [](const DsConfig& d) {
         return d.bf16.bf16_master_weights_and_grads && !d.bf16.bf16_optimizer_states;
       },
       "bf16 masters with fp32 optimizer states (set bf16_optimizer_states too for the "
       "low-precision mode)"},
  };
  return list;
}

[[noreturn]] void conflict(const char* key, const std::string& config_value, const char* flag,
                           const std::string& flag_value) {
  throw ValueError("config", str(key, ": the config gives ", config_value, " but ", flag, " gives ",
                                 flag_value, "; make them agree"));
}

DType dtype_of(config::PrecisionName p) {
  switch (p) {
    case config::PrecisionName::fp16:
      return DType::f16;
    case config::PrecisionName::bf16:
      return DType::bf16;
    case config::PrecisionName::fp32:
      return DType::f32;
  }
  return DType::f32;
}

// A dtype the file may set (unset: the flag's value or the default, f32; see
// [Note: communication dtype] in zero/grad_comm.h) and a flag that must agree with it.
void set_dtype(bool given, const char* key, const char* flag,
               const std::optional<config::PrecisionName>& from_config, DType& field) {
  if (!from_config) return;
  const DType d = dtype_of(*from_config);
  if (given && field != d)
    conflict(key, config::precision_name(*from_config), flag, std::string(dtype_name(field)));
  field = d;
}

template <typename T>
void set(bool given, const char* key, const char* flag, const T& from_config, T& field) {
  if (given && field != from_config) conflict(key, str(from_config), flag, str(field));
  field = from_config;
}

}  // namespace

config::ConfigOverrides train_overrides(const TrainConfig& c, const GivenFlags& g,
                                        std::optional<int64_t> hidden_size) {
  auto v = [](bool given, auto value) { return config::CliValue<decltype(value)>{value, given}; };
  config::ConfigOverrides o;
  o.world_size = c.comm ? c.comm->size() : 1;
  o.hidden_size = hidden_size;
  o.micro_batch = v(g.micro_batch, c.micro_batch);
  o.grad_accum = v(g.grad_accum, c.grad_accum);
  o.total_steps = v(g.steps, c.steps);
  o.warmup_steps = v(g.warmup, c.warmup_steps);
  o.lr = v(g.lr, c.lr);
  o.beta1 = v(g.beta1, c.beta1);
  o.beta2 = v(g.beta2, c.beta2);
  o.eps = v(g.eps, c.eps);
  o.weight_decay = v(g.weight_decay, c.weight_decay);
  o.clip = v(g.clip, c.clip);
  // resolve_auto names the precisions as the ds_config sections do.
  o.dtype =
      v(g.dtype, c.dtype == DType::f16 ? std::string("fp16") : std::string(dtype_name(c.dtype)));
  return o;
}

void apply_ds_config(const DsConfig& ds, const GivenFlags& g, TrainConfig& c) {
  for (const NotYet& n : not_yet())
    if (n.asks(ds))
      throw ValueError("config",
                       str(n.path, ": not supported yet by zerotrain train (", n.why, ")"));
  set(g.micro_batch, "train_micro_batch_size_per_gpu", "--micro-batch",
      ds.train_micro_batch_size_per_gpu, c.micro_batch);
  set(g.grad_accum, "gradient_accumulation_steps", "--grad-accum", ds.gradient_accumulation_steps,
      c.grad_accum);
  set(g.clip, "gradient_clipping", "--clip", ds.gradient_clipping, c.clip);
  const DType dtype = ds.bf16.enabled ? DType::bf16 : ds.fp16.enabled ? DType::f16 : DType::f32;
  if (g.dtype && dtype != c.dtype) {
    const bool fp16_key = ds.fp16.enabled || c.dtype == DType::f16;
    const bool on = fp16_key ? ds.fp16.enabled : ds.bf16.enabled;
    conflict(fp16_key ? "fp16.enabled" : "bf16.enabled", on ? "true" : "false", "--dtype",
             std::string(dtype_name(c.dtype)));
  }
  c.dtype = dtype;
  // See [Note: fp16 in ds_config].
  if (ds.fp16.enabled) {
    c.loss_scaler.loss_scale = ds.fp16.loss_scale;
    c.loss_scaler.initial_scale_power = ds.fp16.initial_scale_power;
    c.loss_scaler.loss_scale_window = ds.fp16.loss_scale_window;
    c.loss_scaler.hysteresis = ds.fp16.hysteresis;
    c.loss_scaler.consecutive_hysteresis = ds.fp16.consecutive_hysteresis;
    c.loss_scaler.min_loss_scale = static_cast<double>(ds.fp16.min_loss_scale);
  }
  // DeepSpeed's bf16 masters and bf16 optimizer states are the low-precision mode (precision.h).
  const optim::Precision precision =
      ds.bf16.bf16_master_weights_and_grads ? optim::Precision::low : optim::Precision::mixed;
  if (g.precision && precision != c.precision)
    conflict("bf16.bf16_master_weights_and_grads",
             ds.bf16.bf16_master_weights_and_grads ? "true" : "false", "--precision",
             std::string(optim::precision_name(c.precision)));
  c.precision = precision;
  if (ds.optimizer) {
    const auto& a = std::get<config::AdamParams>(ds.optimizer->params);
    set(g.lr, "optimizer.params.lr", "--lr", a.lr, c.lr);
    set(g.beta1, "optimizer.params.betas[0]", "--beta1", a.beta1, c.beta1);
    set(g.beta2, "optimizer.params.betas[1]", "--beta2", a.beta2, c.beta2);
    set(g.eps, "optimizer.params.eps", "--eps", a.eps, c.eps);
    set(g.weight_decay, "optimizer.params.weight_decay", "--weight-decay", a.weight_decay,
        c.weight_decay);
    // DeepSpeed: "AdamW" always decouples; "Adam" does unless adam_w_mode is false, which makes
    // it torch.optim.Adam (L2 decay in the gradient). parse_optimizer.cpp folds both into
    // adam_w_mode. torch_adam picks torch's implementation over FusedAdam: the same update.
    auto on_off = [](bool b) { return std::string(b ? "true" : "false"); };
    if (g.weight_decay_mode && c.decoupled_weight_decay != a.adam_w_mode)
      conflict("optimizer.params.adam_w_mode", on_off(a.adam_w_mode), "--weight-decay-mode",
               c.decoupled_weight_decay ? "decoupled" : "l2");
    if (g.amsgrad && c.amsgrad != a.amsgrad)
      conflict("optimizer.params.amsgrad", on_off(a.amsgrad), "--amsgrad", on_off(c.amsgrad));
    if (g.no_bias_correction && c.bias_correction != a.bias_correction)
      conflict("optimizer.params.bias_correction", on_off(a.bias_correction),
               "--no-bias-correction", on_off(c.bias_correction));
    c.decoupled_weight_decay = a.adam_w_mode;
    c.amsgrad = a.amsgrad;
    c.bias_correction = a.bias_correction;
    if (c.amsgrad && c.precision == optim::Precision::low)
      throw ValueError("config",
                       "optimizer.params.amsgrad: true needs an f32 max_exp_avg_sq, which the "
                       "low-precision mode (bf16.bf16_master_weights_and_grads) does not keep; "
                       "turn one off");
  }
  if (ds.steps_per_print)
    set(g.log_every, "steps_per_print", "--log-every", *ds.steps_per_print, c.log_every);
  // See [Note: activation checkpointing].
  if (ds.activation_checkpointing.present) c.activation_checkpointing = true;
  // See [Note: trainer scheduler]: without a section the command line's --schedule applies.
  if (ds.scheduler) c.scheduler = ds_scheduler_json(*ds.scheduler, c.lr);
  c.wall_clock_breakdown = c.wall_clock_breakdown || ds.wall_clock_breakdown;
  if (ds.csv_monitor.enabled)
    c.csv_monitor_dir = std::filesystem::path(ds.csv_monitor.output_path) / ds.csv_monitor.job_name;
  // Gradient accumulation and reduction dtypes of every stage (zero/grad_comm.h).
  set_dtype(g.grad_accum_dtype, "data_types.grad_accum_dtype", "--grad-accum-dtype",
            ds.data_types.grad_accum_dtype, c.grad_accum_dtype);
  if (ds.data_types.grad_accum_dtype && c.grad_accum_dtype != DType::f32 &&
      c.grad_accum_dtype != c.dtype)
    throw ValueError("config", str("data_types.grad_accum_dtype: ", dtype_name(c.grad_accum_dtype),
                                   " needs the model in that dtype (bf16.enabled), or use fp32"));
  set_dtype(g.comm_dtype, "communication_data_type", "--comm-dtype", ds.communication_data_type,
            c.comm_dtype);
  c.wandb = ds.wandb;  // an offline run, never a service (wandb_monitor.h)
  if (ds.tensorboard.enabled) {
    const auto dir = std::filesystem::path(ds.tensorboard.output_path) / ds.tensorboard.job_name;
    // An empty tensorboard_dir is the flag's default: --tensorboard was not given.
    set(!c.tensorboard_dir.empty(), "tensorboard.output_path/job_name", "--tensorboard", dir,
        c.tensorboard_dir);
  }
  // Gradient reduction of every stage (zero/data_parallel.h, zero/sharded_stage.h).
  c.reduce_bucket_elements = ds.zero_optimization.reduce_bucket_size;
  c.overlap_comm = ds.zero_optimization.overlap_comm;
  // The ZeRO stage and stage 3's gather bounds (zero/zero_stage.h).
  c.zero_stage = ds.zero_optimization.stage;
  c.persistence_threshold = ds.zero_optimization.param_persistence_threshold;
  c.prefetch_elements = ds.zero_optimization.prefetch_bucket_size;
  c.max_live_elements = ds.zero_optimization.max_live_parameters;
}

}  // namespace zt::train
