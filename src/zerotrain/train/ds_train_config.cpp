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
      {"fp16.fp16_master_weights_and_grads",
       [](const DsConfig& d) { return d.fp16.enabled && d.fp16.fp16_master_weights_and_grads; },
       "fp16 masters and gradients (masters and gradients are f32)"},
      {"amp.enabled", [](const DsConfig& d) { return d.amp.enabled; },
       "NVIDIA Apex AMP (use bf16)"},
      {"zero_optimization.offload_optimizer",
       [](const DsConfig& d) {
         const auto& o = d.zero_optimization.offload_optimizer;
         return d.optimizer && d.optimizer->type == config::OptimizerType::lamb && o &&
                o->device != config::OffloadDevice::none && d.zero_optimization.stage > 0;
       },
       "Lamb with optimizer offload: its trust ratio needs every parameter's norms before the "
       "host sub-groups' updates (offload Adam, Lion or SGD)"},
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

config::ConfigOverrides train_overrides(const TrainConfig& c, const GivenFlags& given,
                                        std::optional<int64_t> hidden_size) {
  config::ConfigOverrides o;
  o.world_size = c.comm ? c.comm->size() : 1;
  o.hidden_size = hidden_size;
  o.micro_batch = c.data.micro_batch;
  o.grad_accum = c.data.grad_accum;
  o.total_steps = c.steps;
  o.warmup_steps = c.schedule.warmup_steps;
  o.lr = c.schedule.lr;
  o.beta1 = c.optimizer.beta1;
  o.beta2 = c.optimizer.beta2;
  o.eps = c.optimizer.eps;
  o.weight_decay = c.optimizer.weight_decay;
  o.clip = c.clip;
  // resolve_auto names the precisions as the ds_config sections do.
  o.dtype = c.precision.dtype == DType::f16 ? std::string("fp16")
                                            : std::string(dtype_name(c.precision.dtype));
  o.zero_stage = c.zero.stage;
  o.reduce_bucket_size = c.zero.reduce_bucket_size;
  o.persistence_threshold = c.zero.param_persistence_threshold;
  o.prefetch_bucket_size = c.zero.prefetch_bucket_size;
  o.max_live_parameters = c.zero.max_live_parameters;
  // The offload flags (offload_flags.h) set both sections' nvme_path and pin_memory alike.
  const zero::OffloadPolicy& p = c.zero.offload;
  o.sub_group_size = p.sub_group_size;
  o.offload_optimizer = config::offload_device_name(p.optimizer.device);
  o.offload_param = config::offload_device_name(p.params.device);
  o.nvme_path = p.optimizer.nvme_path;
  o.pin_memory = p.optimizer.pin_memory;
  o.given = given;
  return o;
}

namespace {

bool has(const GivenFlags& g, std::string_view flag) {
  return g.contains(flag);
}

void apply_data(const DsConfig& ds, const GivenFlags& g, DataConfig& d) {
  set(has(g, "--micro-batch"), "train_micro_batch_size_per_gpu", "--micro-batch",
      ds.train_micro_batch_size_per_gpu, d.micro_batch);
  set(has(g, "--grad-accum"), "gradient_accumulation_steps", "--grad-accum",
      ds.gradient_accumulation_steps, d.grad_accum);
}

void apply_precision(const DsConfig& ds, const GivenFlags& g, PrecisionConfig& p) {
  const DType dtype = ds.bf16.enabled ? DType::bf16 : ds.fp16.enabled ? DType::f16 : DType::f32;
  if (has(g, "--dtype") && dtype != p.dtype) {
    const bool fp16_key = ds.fp16.enabled || p.dtype == DType::f16;
    const bool on = fp16_key ? ds.fp16.enabled : ds.bf16.enabled;
    conflict(fp16_key ? "fp16.enabled" : "bf16.enabled", on ? "true" : "false", "--dtype",
             std::string(dtype_name(p.dtype)));
  }
  p.dtype = dtype;
  // See [Note: fp16 in ds_config].
  if (ds.fp16.enabled) {
    p.loss_scaler.loss_scale = ds.fp16.loss_scale;
    p.loss_scaler.initial_scale_power = ds.fp16.initial_scale_power;
    p.loss_scaler.loss_scale_window = ds.fp16.loss_scale_window;
    p.loss_scaler.hysteresis = ds.fp16.hysteresis;
    p.loss_scaler.consecutive_hysteresis = ds.fp16.consecutive_hysteresis;
    p.loss_scaler.min_loss_scale = static_cast<double>(ds.fp16.min_loss_scale);
  }
  // DeepSpeed's bf16 masters and bf16 optimizer states are the low-precision mode (precision.h).
  const optim::Precision mode =
      ds.bf16.bf16_master_weights_and_grads ? optim::Precision::low : optim::Precision::mixed;
  if (has(g, "--precision") && mode != p.mode)
    conflict("bf16.bf16_master_weights_and_grads",
             ds.bf16.bf16_master_weights_and_grads ? "true" : "false", "--precision",
             std::string(optim::precision_name(p.mode)));
  p.mode = mode;
  p.check_grad_overflow = ds.bf16.enabled && ds.bf16.check_grad_overflow;
  // Gradient accumulation and reduction dtypes of every stage (zero/grad_comm.h).
  set_dtype(has(g, "--grad-accum-dtype"), "data_types.grad_accum_dtype", "--grad-accum-dtype",
            ds.data_types.grad_accum_dtype, p.grad_accum_dtype);
  set_dtype(has(g, "--comm-dtype"), "communication_data_type", "--comm-dtype",
            ds.communication_data_type, p.comm_dtype);
}

// The optimizer section and the clipping; the peak lr belongs to the schedule section.
void apply_optimizer(const DsConfig& ds, const GivenFlags& g, TrainConfig& c) {
  set(has(g, "--clip"), "gradient_clipping", "--clip", ds.gradient_clipping, c.clip);
  if (!ds.optimizer) return;
  optim::OptimizerConfig& o = c.optimizer;
  auto on_off = [](bool b) { return std::string(b ? "true" : "false"); };
  // The flags of Adam's variants name settings the other rules do not have.
  const bool adam = ds.optimizer->type == config::OptimizerType::adam ||
                    ds.optimizer->type == config::OptimizerType::adamw;
  if (!adam)
    for (const char* flag : {"--weight-decay-mode", "--amsgrad", "--no-bias-correction"})
      if (has(g, flag))
        throw ValueError("config", str(flag, ": an Adam setting, but optimizer.type is ",
                                       config::optimizer_type_name(ds.optimizer->type)));
  // The file's rule (optim::rule_of); a given flag must agree with each setting the rule has.
  const optim::OptimizerConfig r = optim::rule_of(*ds.optimizer, o);
  const double lr = std::visit([](const auto& p) { return p.lr; }, ds.optimizer->params);
  set(has(g, "--lr"), "optimizer.params.lr", "--lr", lr, c.schedule.lr);
  set(has(g, "--weight-decay"), "optimizer.params.weight_decay", "--weight-decay", r.weight_decay,
      o.weight_decay);
  if (optim::has_betas(r.kind)) {
    set(has(g, "--beta1"), "optimizer.params.betas[0]", "--beta1", r.beta1, o.beta1);
    set(has(g, "--beta2"), "optimizer.params.betas[1]", "--beta2", r.beta2, o.beta2);
  }
  if (optim::has_eps(r.kind)) set(has(g, "--eps"), "optimizer.params.eps", "--eps", r.eps, o.eps);
  if (r.kind == optim::OptimizerKind::adam) {
    if (has(g, "--weight-decay-mode") && o.adam_w_mode != r.adam_w_mode)
      conflict("optimizer.params.adam_w_mode", on_off(r.adam_w_mode), "--weight-decay-mode",
               o.adam_w_mode ? "decoupled" : "l2");
    if (has(g, "--amsgrad") && o.amsgrad != r.amsgrad)
      conflict("optimizer.params.amsgrad", on_off(r.amsgrad), "--amsgrad", on_off(o.amsgrad));
    if (has(g, "--no-bias-correction") && o.bias_correction != r.bias_correction)
      conflict("optimizer.params.bias_correction", on_off(r.bias_correction),
               "--no-bias-correction", on_off(o.bias_correction));
  }
  o = r;
}

// See [Note: trainer scheduler]: without a section the command line's --schedule applies.
// WarmupLR without warmup_max_lr warms up to the optimizer's lr (the peak lr of the run).
void apply_schedule(const DsConfig& ds, ScheduleConfig& s) {
  if (!ds.scheduler) return;
  s.deepspeed = *ds.scheduler;
  if (auto* w = std::get_if<config::WarmupLrParams>(&s.deepspeed->params))
    w->warmup_max_lr = w->warmup_max_lr.value_or(s.lr);
}

void apply_reporting(const DsConfig& ds, const GivenFlags& g, ReportConfig& r) {
  if (ds.steps_per_print)
    set(has(g, "--log-every"), "steps_per_print", "--log-every", *ds.steps_per_print, r.log_every);
  r.wall_clock_breakdown = r.wall_clock_breakdown || ds.wall_clock_breakdown;
  r.checkpoint_weights =
      r.checkpoint_weights || ds.zero_optimization.gather_16bit_weights_on_model_save;
  if (ds.csv_monitor.enabled)
    r.csv_monitor_dir = std::filesystem::path(ds.csv_monitor.output_path) / ds.csv_monitor.job_name;
  r.wandb = ds.wandb;  // an offline run, never a service (wandb_monitor.h)
  if (ds.tensorboard.enabled) {
    const auto dir = std::filesystem::path(ds.tensorboard.output_path) / ds.tensorboard.job_name;
    set(has(g, "--tensorboard"), "tensorboard.output_path/job_name", "--tensorboard", dir,
        r.tensorboard_dir);
  }
}

// The given ZeRO flags already filled or agree with the file (resolve_auto.h).
void apply_zero(const DsConfig& ds, zero::ZeroConfig& z) {
  const config::ZeroConfig& f = ds.zero_optimization;
  // The settings the engine runs on are one struct (config/zero_engine_settings.h), taken whole;
  // zero_hpz_partition_size is checked against the world by the engine.
  static_cast<config::ZeroEngineSettings&>(z) = f;
  z.overlap_comm = f.overlap_comm;
  // Offload: the policy the engine is given (offload_policy.h), checked by validate_zero_config.
  // The file's sections replace what the flags set (a given flag already filled or agrees with
  // them); offload_param below stage 3 is ignored, as DeepSpeed does, and load_ds_config warned
  // ([Note: offload at the wrong stage] in config/load.cpp).
  z.offload = zero::OffloadPolicy{};
  if (const auto& o = f.offload_optimizer) {
    zero::OptimizerOffload& t = z.offload.optimizer;
    t.device = o->device;
    t.pin_memory = o->pin_memory;
    t.nvme_path = o->nvme_path.value_or("");
    t.buffer_count = o->buffer_count;
    t.ratio = o->ratio;
  }
  if (const auto& p = f.offload_param; p && f.stage == 3) {
    zero::ParamOffload& t = z.offload.params;
    t.device = p->device;
    t.pin_memory = p->pin_memory;
    t.nvme_path = p->nvme_path.value_or("");
    t.buffer_count = p->buffer_count;
    t.buffer_size = p->buffer_size;
    t.max_in_cpu = p->max_in_cpu;
  }
  z.offload.sub_group_size = f.sub_group_size;
  z.offload.aio = ds.aio;
}

}  // namespace

void apply_ds_config(const DsConfig& ds, const GivenFlags& g, TrainConfig& c) {
  for (const NotYet& n : not_yet())
    if (n.asks(ds))
      throw ValueError("config",
                       str(n.path, ": not supported yet by zerotrain train (", n.why, ")"));
  apply_data(ds, g, c.data);
  apply_precision(ds, g, c.precision);
  // DeepSpeed's bf16 optimizer skips a step whose gradients overflow when check_grad_overflow is
  // on (its default): the same unless --on-nonfinite says otherwise (fault_config.h).
  if (c.precision.check_grad_overflow && !has(g, "--on-nonfinite"))
    c.faults.on_nonfinite = NonFinitePolicy::skip;
  apply_optimizer(ds, g, c);
  apply_schedule(ds, c.schedule);
  apply_reporting(ds, g, c.reporting);
  apply_zero(ds, c.zero);
  // See [Note: activation checkpointing].
  if (ds.activation_checkpointing.present) c.activation_checkpointing = true;
}

}  // namespace zt::train
