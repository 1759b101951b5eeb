// The table of key_usage.h. A row's path is a key, or a section ending in ".*" for every key under
// it. Keep it in step with train/ds_train_config.cpp (what train maps, what it refuses for now).
#include "zerotrain/config/key_usage.h"

#include <array>

#include "zerotrain/config/json_walk.h"
#include "zerotrain/config/key_table.h"
#include "zerotrain/config/load.h"
#include "zerotrain/core/error.h"

namespace zt::config {

namespace {

struct Usage {
  std::string_view path;
  std::string_view how;
  // Read nowhere, and a value other than the default changes what DeepSpeed does (its numbers
  // or its outputs): the load warns when the file sets one.
  bool warn_when_set = false;
};

constexpr std::string_view kBatch =
    "train: the batch (micro x accumulation x ranks, DeepSpeed's rule)";
constexpr std::string_view kLossScaler =
    "train with fp16: the dynamic loss scaler (train/loss_scaler.h)";
constexpr std::string_view kScheduler = "train: the learning-rate schedule, DeepSpeed's formula";
constexpr std::string_view kAdam = "train: the Adam/AdamW step";
constexpr std::string_view kEveryRule = "train: the optimizer step (Adam, AdamW, Lamb, Lion, SGD)";
constexpr std::string_view kLamb = "train: the Lamb step (FusedLamb's trust ratio)";
constexpr std::string_view kSgd = "train: the SGD step (torch.optim.SGD)";
constexpr std::string_view kNotYet = "refused by train when on (not supported yet)";
constexpr std::string_view kOffloadOpt =
    "train: the optimizer offload policy (zero/offload_policy.h)";
constexpr std::string_view kOffloadParam =
    "train at stage 3: the parameter offload policy (ignored below stage 3, as DeepSpeed does)";

constexpr std::array kUsage = {
    Usage{"train_batch_size", kBatch},
    Usage{"train_micro_batch_size_per_gpu", kBatch},
    Usage{"gradient_accumulation_steps", kBatch},
    Usage{"gradient_clipping",
          "train: global-norm clipping (0 off; DeepSpeed 0.19.6's default 1.0)"},
    Usage{"steps_per_print", "train: log every N steps (--log-every)"},
    Usage{"wall_clock_breakdown", "train: per-phase milliseconds in the log"},
    Usage{"memory_breakdown", kNotYet},
    Usage{"dump_state", kNotYet},
    Usage{"sparse_gradients", kNotYet},
    Usage{"prescale_gradients",
          "parsed; read nowhere: gradients are averaged after the sum (DeepSpeed's prescaling "
          "divides before; the same average up to rounding)",
          true},
    Usage{"gradient_predivide_factor",
          "parsed; read nowhere: gradients are averaged after the sum, as with factor 1 (the "
          "same average up to rounding)",
          true},
    Usage{"zero_allow_untested_optimizer",
          "config check: whether DeepSpeed would refuse Lamb or SGD under ZeRO (warned); "
          "zerotrain runs every optimizer it has at every stage"},
    Usage{"zero_force_ds_cpu_optimizer",
          "parsed; read nowhere: offload always steps zerotrain's own CPU Adam"},
    Usage{"disable_allgather", "parsed; read nowhere: stage 1-2 gather the updated shards always"},
    Usage{"dataloader_drop_last",
          "parsed; read nowhere: zerotrain's data loader always drops the "
          "last partial batch"},
    Usage{"vocabulary_size", "parsed; read nowhere: the vocabulary comes from --model"},
    Usage{"communication_data_type", "train: the dtype gradients are reduced in (--comm-dtype)"},
    Usage{"data_types.grad_accum_dtype",
          "train: the gradient accumulation dtype (--grad-accum-dtype)"},
    Usage{"data_types.param_dtype", "parsed; read nowhere: parameters take --dtype"},
    Usage{"data_types.buffer_dtype", "parsed; read nowhere: zerotrain's models have no buffers"},
    Usage{"fp16.enabled", "train: f16 compute with f32 masters (--dtype fp16)"},
    Usage{"fp16.auto_cast", "parsed; read nowhere: zerotrain's models cast their own inputs"},
    Usage{"fp16.loss_scale", kLossScaler},
    Usage{"fp16.initial_scale_power", kLossScaler},
    Usage{"fp16.loss_scale_window", kLossScaler},
    Usage{"fp16.hysteresis", kLossScaler},
    Usage{"fp16.consecutive_hysteresis", kLossScaler},
    Usage{"fp16.min_loss_scale", kLossScaler},
    Usage{"fp16.fp16_master_weights_and_grads", kNotYet},
    Usage{"bf16.enabled", "train: bf16 compute with f32 masters (--dtype bf16)"},
    Usage{"bf16.immediate_grad_update",
          "parsed; read nowhere: the update happens once per step after accumulation"},
    Usage{"bf16.check_grad_overflow",
          "train: a non-finite bf16 gradient skips the step and its scheduler step, as an fp16 "
          "overflow does (without it the update is skipped and the scheduler steps)"},
    Usage{"bf16.bf16_master_weights_and_grads",
          "train with bf16_optimizer_states: the low-precision mode (--precision low)"},
    Usage{"bf16.bf16_optimizer_states",
          "train with bf16_master_weights_and_grads: the low-precision mode (--precision low)"},
    Usage{"amp.*", "refused by train when enabled (no Apex; use bf16)"},
    Usage{"optimizer.type",
          "train: the update rule of every stage's one flat optimizer (optim/flat_optimizer.h)"},
    Usage{"optimizer.legacy_fusion", "parsed; read nowhere: one fused update per run"},
    Usage{"optimizer.params.lr", kEveryRule},
    Usage{"optimizer.params.betas", "train: the Adam/AdamW, Lamb and Lion steps"},
    Usage{"optimizer.params.eps", "train: the Adam/AdamW and Lamb steps"},
    Usage{"optimizer.params.weight_decay", kEveryRule},
    Usage{"optimizer.params.adam_w_mode", kAdam},
    Usage{"optimizer.params.amsgrad", kAdam},
    Usage{"optimizer.params.bias_correction", "train: the Adam/AdamW and Lamb steps"},
    Usage{"optimizer.params.torch_adam",
          "parsed; read nowhere: torch's Adam and FusedAdam make the same update"},
    Usage{"optimizer.params.max_coeff", kLamb},
    Usage{"optimizer.params.min_coeff", kLamb},
    Usage{"optimizer.params.eps_inside_sqrt", kLamb},
    Usage{"optimizer.params.momentum", kSgd},
    Usage{"optimizer.params.dampening", kSgd},
    Usage{"optimizer.params.nesterov", kSgd},
    Usage{"optimizer.params.maximize", "refused when true (gradient ascent)"},
    Usage{"optimizer.params.set_grad_none",
          "parsed; read nowhere: FusedLion's choice of when gradients are dropped"},
    Usage{"optimizer.params.*",
          "parsed; read nowhere: torch's implementation choices (foreach, fused, "
          "differentiable) make the same update"},
    Usage{"scheduler.params.last_batch_iteration",
          "refused by train when set (start a schedule part-way with --resume)"},
    Usage{"scheduler.*", kScheduler},
    Usage{"zero_optimization.stage", "train: the ZeRO stage"},
    Usage{"zero_optimization.reduce_bucket_size", "train: gradient elements per reduce bucket"},
    Usage{"zero_optimization.overlap_comm",
          "train: reduce-scatters and gathers on side streams (GPU)"},
    Usage{"zero_optimization.stage3_param_persistence_threshold",
          "train at stage 3: blocks this small stay gathered"},
    Usage{"zero_optimization.stage3_prefetch_bucket_size",
          "train at stage 3: parameter elements prefetched at most"},
    Usage{"zero_optimization.stage3_max_live_parameters",
          "train at stage 3: gathered parameter elements at most"},
    Usage{"zero_optimization.sub_group_size",
          "train with offload: elements the host steps as one unit"},
    Usage{"zero_optimization.offload_optimizer.cpuadam_cores_perc",
          "parsed; read nowhere: the host step uses OpenMP's threads"},
    Usage{"zero_optimization.offload_optimizer.pipeline_read",
          "parsed; read nowhere: swap reads always overlap the step"},
    Usage{"zero_optimization.offload_optimizer.pipeline_write",
          "parsed; read nowhere: swap writes always overlap the step"},
    Usage{"zero_optimization.offload_optimizer.fast_init",
          "parsed; read nowhere: swap files are written once at setup"},
    Usage{"zero_optimization.offload_optimizer.super_offload",
          "parsed; read nowhere: no SuperOffload (GH200's) mode"},
    Usage{"zero_optimization.offload_optimizer.convert_grad_on_cpu",
          "parsed; read nowhere: gradients are copied to the host in f32"},
    Usage{"zero_optimization.offload_optimizer.*", kOffloadOpt},
    Usage{"zero_optimization.offload_param.*", kOffloadParam},
    Usage{"zero_optimization.contiguous_gradients",
          "parsed; read nowhere: gradients always live in contiguous flat buffers"},
    Usage{"zero_optimization.reduce_scatter",
          "parsed; read nowhere: stages 2-3 always reduce-scatter"},
    Usage{"zero_optimization.allgather_partitions",
          "parsed; read nowhere: stages 1-2 always all-gather the updated shards"},
    Usage{"zero_optimization.allgather_bucket_size",
          "parsed; read nowhere: one all-gather per parameter group"},
    Usage{"zero_optimization.use_multi_rank_bucket_allreduce",
          "parsed; read nowhere: one all-reduce per bucket"},
    Usage{"zero_optimization.load_from_fp32_weights",
          "parsed; read nowhere: a resume always loads the f32 masters (DeepSpeed with false "
          "rebuilds them from the 16-bit weights)",
          true},
    Usage{"zero_optimization.elastic_checkpoint",
          "parsed; read nowhere: checkpoints hold the full state, any stage resumes them"},
    Usage{"zero_optimization.stage3_model_persistence_threshold",
          "parsed; read nowhere: the per-block threshold decides alone"},
    Usage{"zero_optimization.stage3_max_reuse_distance",
          "parsed; read nowhere: stage 3 releases a block after its use (bounded prefetch)"},
    Usage{"zero_optimization.stage3_gather_16bit_weights_on_model_save",
          "every checkpoint also holds the model's Hugging Face weights (--checkpoint-weights)"},
    Usage{"zero_optimization.stage3_module_granularity_threshold",
          "parsed; read nowhere: blocks are the units"},
    Usage{"zero_optimization.stage3_use_all_reduce_for_fetch_params",
          "parsed; read nowhere: parameters are all-gathered"},
    Usage{"zero_optimization.stage3_allgather_sequential", "parsed; read nowhere"},
    Usage{"zero_optimization.stage3_partition_stream_chunk_size", "parsed; read nowhere"},
    Usage{"zero_optimization.ignore_unused_parameters",
          "parsed; read nowhere: zerotrain's models use every parameter"},
    Usage{"zero_optimization.legacy_stage1", "parsed; read nowhere: one stage 1"},
    Usage{"zero_optimization.round_robin_gradients",
          "parsed; read nowhere: one order of gradient copies"},
    Usage{"zero_optimization.zero_hpz_partition_size",
          "train: hybrid sharding (FSDP's HSDP) at stages 1-3: values, gradients and optimizer "
          "state sharded within groups of this many consecutive ranks and replicated across the "
          "groups, gradients still summed over every rank (CPU ranks: in rank order, bitwise as "
          "plain ZeRO; NCCL: within the group, then across the groups). 1, the world size or "
          "more (a config written for larger nodes): plain ZeRO over every rank; a smaller "
          "value that does not divide the world size, or a divisor at stage 0: refused. "
          "Unlike DeepSpeed's hpZ (ZeRO++), which only keeps a secondary copy of the parameters "
          "within the node and shards the optimizer state over the world"},
    Usage{"zero_optimization.zero_quantized_weights",
          "parsed; read nowhere: no ZeRO++ quantization, weights are gathered exactly", true},
    Usage{"zero_optimization.zero_quantized_nontrainable_weights",
          "parsed; read nowhere: no ZeRO++ quantization, weights are gathered exactly", true},
    Usage{"zero_optimization.zero_quantized_gradients",
          "parsed; read nowhere: no ZeRO++ quantization, gradients are reduced exactly", true},
    Usage{"zero_optimization.memory_efficient_linear", "parsed; read nowhere: zerotrain's linear"},
    Usage{"zero_optimization.pipeline_loading_checkpoint", "parsed; read nowhere"},
    Usage{"zero_optimization.override_module_apply", "parsed; read nowhere: no module hooks"},
    Usage{"zero_optimization.log_trace_cache_warnings", "parsed; read nowhere: no trace cache"},
    Usage{"zero_optimization.enable_sanity_checks", "parsed; read nowhere"},
    Usage{"zero_optimization.save_muon_momentum_buffer_in_memory", "parsed; read nowhere: no Muon"},
    Usage{"activation_checkpointing.cpu_checkpointing", kNotYet},
    Usage{"activation_checkpointing.*",
          "train: the section's presence turns on per-block activation checkpointing; its "
          "settings are read nowhere"},
    Usage{"checkpoint.load_universal", kNotYet},
    Usage{"checkpoint.*", "parsed; read nowhere: one checkpoint format, written atomically"},
    Usage{"tensorboard.*", "train: TensorBoard event files under output_path/job_name"},
    Usage{"csv_monitor.*", "train: CSV files under output_path/job_name"},
    Usage{"wandb.*", "train: an offline wandb run (`wandb sync` uploads it)"},
    Usage{"comet.*", "refused by train when enabled (zerotrain never contacts a service)"},
    Usage{"flops_profiler.*", "refused by train when enabled (train reports MFU)"},
    Usage{"comms_logger.*", "refused by train when enabled"},
    Usage{"aio.*", "train with nvme offload: the swap files' I/O (io/swap_file.h)"},
};

// The stage-3 keys' other spelling ("prefetch_bucket_size" for "stage3_prefetch_bucket_size").
std::string canonical(std::string_view path) {
  constexpr std::string_view zero = "zero_optimization.";
  if (!path.starts_with(zero)) return std::string(path);
  const std::string key(path.substr(zero.size()));
  if (key.find('.') != std::string::npos || key.starts_with("stage3_")) return std::string(path);
  const std::string stage3 = str(zero, "stage3_", key);
  for (const Usage& u : kUsage)
    if (u.path == stage3) return stage3;
  return std::string(path);
}

// "deprecated: read as ..." for a key of the deprecation table (or the boolean zero_optimization).
std::optional<std::string> deprecation_of(const std::string& path, const nlohmann::json& value) {
  if (path == "zero_optimization" && value.is_boolean())
    return "deprecated boolean form: read as stage 1 (true) or 0";
  for (const DeprecatedKey& d : deprecated_keys())
    if (path == join_path(d.section, d.key))
      return str("deprecated: read as ", join_path(d.section, d.replacement));
  return std::nullopt;
}

std::string value_text(const nlohmann::json& v) {
  const std::string s = v.dump();
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

void explain_object(const nlohmann::json& object, const std::string& path,
                    const nlohmann::json& resolved, std::string& out);

void explain_key(const std::string& key_path, const nlohmann::json& value,
                 const nlohmann::json& resolved, std::string& out) {
  const std::optional<std::string> deprecated = deprecation_of(key_path, value);
  if (value.is_object() && !find_unsupported(key_path) && !find_misplaced(key_path) &&
      !deprecated) {
    explain_object(value, key_path, resolved, out);
    return;
  }
  std::string shown = value_text(value);
  if (value.is_string() && value.get<std::string>() == "auto") {
    const nlohmann::json* node = &resolved;
    const std::string printed = canonical(key_path);
    size_t start = 0;
    while (node && node->is_object()) {
      const size_t dot = printed.find('.', start);
      const auto it = node->find(printed.substr(start, dot - start));
      node = it == node->end() ? nullptr : &*it;
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    if (node) shown += str(" -> ", value_text(*node));
  }
  std::string how;
  if (deprecated) {
    how = *deprecated;
  } else if (const auto u = key_usage(key_path)) {
    how = *u;
  } else if (const UnsupportedKey* k = find_unsupported(key_path)) {
    how = str("unsupported, ignored because the feature is off (", k->reason, ")");
  } else if (const MisplacedKey* m = find_misplaced(key_path)) {
    how = str("ignored: belongs in ", m->section, " (DeepSpeed ignores it too)");
  } else if (key_path.find('.') == std::string::npos) {
    how = "unknown top-level key: ignored, as DeepSpeed does";
  } else {
    how = "read as its section's parameters";
  }
  out += str(key_path, " = ", shown, ": ", how, "\n");
}

void explain_object(const nlohmann::json& object, const std::string& path,
                    const nlohmann::json& resolved, std::string& out) {
  for (const auto& [key, value] : object.items())
    explain_key(join_path(path, key), value, resolved, out);
}

}  // namespace

std::optional<std::string> key_usage(std::string_view path) {
  const std::string key = canonical(path);
  for (const Usage& u : kUsage) {
    if (u.path == key) return std::string(u.how);
    if (u.path.ends_with(".*") && key.starts_with(u.path.substr(0, u.path.size() - 1)))
      return std::string(u.how);
  }
  return std::nullopt;
}

std::vector<std::string> unread_setting_warnings(const DsConfig& config) {
  static const nlohmann::json defaults = nlohmann::json::parse(ds_config_json(DsConfig{}));
  const nlohmann::json printed = nlohmann::json::parse(ds_config_json(config));
  std::vector<std::string> out;
  for (const Usage& u : kUsage) {
    if (!u.warn_when_set) continue;
    std::string pointer = "/";
    for (char c : u.path)
      pointer += c == '.' ? '/' : c;
    const nlohmann::json::json_pointer at(pointer);
    if (!printed.contains(at) || printed[at] == defaults[at]) continue;
    constexpr std::string_view prefix = "parsed; read nowhere: ";
    out.push_back(str("[config] ", u.path, ": ", printed[at].dump(),
                      " changes what DeepSpeed does, but zerotrain reads it nowhere: ",
                      u.how.substr(prefix.size())));
  }
  return out;
}

std::string explain_config(const nlohmann::json& file, const nlohmann::json& resolved) {
  std::string out;
  explain_object(file, "", resolved, out);
  return out;
}

}  // namespace zt::config
