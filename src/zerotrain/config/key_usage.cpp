// The table of key_usage.h. A row's path is a key, or a section ending in ".*" for every key under
// it; zero_optimization's rows are zero_key_table.h's. Keep it in step with
// train/ds_train_config.cpp (what train maps, what it refuses for now).
#include "zerotrain/config/key_usage.h"

#include <array>

#include "zerotrain/config/json_walk.h"
#include "zerotrain/config/key_table.h"
#include "zerotrain/config/load.h"
#include "zerotrain/config/zero_key_table.h"
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
constexpr std::string_view kZero = "zero_optimization.";
constexpr std::string_view kZeroRows = "zero_optimization.*";

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
    // zero_optimization's rows: zero_key_table.h's usage texts, in its place in this order.
    Usage{kZeroRows, ""},
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
  if (!path.starts_with(kZero)) return std::string(path);
  return str(kZero, zero_key_printed_path(path.substr(kZero.size())));
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
  if (path.starts_with(kZero)) {
    const auto how = zero_key_usage(path.substr(kZero.size()));
    return how ? std::optional<std::string>(std::string(*how)) : std::nullopt;
  }
  const std::string key(path);
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
  auto warn = [&](const std::string& path, std::string_view how) {
    std::string pointer = "/";
    for (char c : path)
      pointer += c == '.' ? '/' : c;
    const nlohmann::json::json_pointer at(pointer);
    if (!printed.contains(at) || printed[at] == defaults[at]) return;
    constexpr std::string_view prefix = "parsed; read nowhere: ";
    out.push_back(str("[config] ", path, ": ", printed[at].dump(),
                      " changes what DeepSpeed does, but zerotrain reads it nowhere: ",
                      how.substr(prefix.size())));
  };
  for (const Usage& u : kUsage) {
    if (u.path == kZeroRows) {
      for (const ZeroKey& k : zero_key_table())
        if (k.warn_when_set) warn(str(kZero, k.path), k.usage);
    } else if (u.warn_when_set) {
      warn(std::string(u.path), u.how);
    }
  }
  return out;
}

std::string explain_config(const nlohmann::json& file, const nlohmann::json& resolved) {
  std::string out;
  explain_object(file, "", resolved, out);
  return out;
}

}  // namespace zt::config
