// The tables of key_table.h. To support a key: remove it from kUnsupported and read it in the
// section's parse_*.cpp.
#include "zerotrain/config/key_table.h"

#include <array>

#include "zerotrain/core/error.h"

namespace zt::config {

namespace {

constexpr std::string_view kNoFeature = "not supported by zerotrain (no such feature)";

constexpr std::array kUnsupported = {
    UnsupportedKey{"sparse_attention", kNoFeature},
    UnsupportedKey{"pipeline", "not supported by zerotrain (no pipeline parallelism)"},
    UnsupportedKey{"progressive_layer_drop", kNoFeature, Inert::enabled_false},
    UnsupportedKey{"curriculum_learning", kNoFeature, Inert::enabled_false},
    UnsupportedKey{"data_efficiency", kNoFeature, Inert::enabled_false},
    UnsupportedKey{"compression_training", "not supported by zerotrain (no compression)",
                   Inert::every_technique_off},
    UnsupportedKey{"quantize_training", kNoFeature, Inert::enabled_false},
    UnsupportedKey{"eigenvalue", kNoFeature, Inert::enabled_false},
    UnsupportedKey{"elasticity", "not supported by zerotrain (no elastic training)",
                   Inert::enabled_false},
    UnsupportedKey{"autotuning", kNoFeature, Inert::enabled_false},
    UnsupportedKey{"hybrid_engine", kNoFeature, Inert::enabled_false},
    UnsupportedKey{"nebula", kNoFeature, Inert::enabled_false},
    UnsupportedKey{"datastates", kNoFeature},
    UnsupportedKey{"compile", "not supported by zerotrain (no torch.compile)"},
    UnsupportedKey{"torch_autocast", "not supported by zerotrain; use bf16 or fp16",
                   Inert::enabled_false},
    UnsupportedKey{"tensor_parallel", "not supported by zerotrain (no tensor parallelism)"},
    UnsupportedKey{"expert_parallel", "not supported by zerotrain (no mixture of experts)"},
    UnsupportedKey{"weight_quantization", kNoFeature},
    UnsupportedKey{"sequence_parallel_size", "not supported by zerotrain (no sequence parallelism)",
                   Inert::size_one},
    UnsupportedKey{"seq_parallel_communication_data_type",
                   "not supported by zerotrain (no sequence parallelism)",
                   Inert::no_sequence_parallelism},
    UnsupportedKey{"use_data_before_expert_parallelism",
                   "not supported by zerotrain (no mixture of experts)"},
    UnsupportedKey{"gradient_allreduce_op", "not supported by zerotrain (gradients are averaged)"},
    UnsupportedKey{"managed_gradient_accumulation", kNoFeature},
    UnsupportedKey{"graph_harvesting", kNoFeature},
    UnsupportedKey{"timers", kNoFeature},
    UnsupportedKey{"log_level", "not supported by zerotrain (the CLI decides what it prints)"},
    UnsupportedKey{"seed",
                   "not a DeepSpeed key (DeepSpeed ignores it); use `zerotrain train --seed`"},
    UnsupportedKey{"zero_optimization.zenflow", kNoFeature},
    UnsupportedKey{"zero_optimization.zeropp_loco_param", "not supported by zerotrain (no ZeRO++)"},
    UnsupportedKey{"zero_optimization.mics_shard_size", "not supported by zerotrain (no MiCS)"},
    UnsupportedKey{"zero_optimization.mics_hierarchical_params_gather",
                   "not supported by zerotrain (no MiCS)"},
    UnsupportedKey{"zero_optimization.leaf_module",
                   "not supported by zerotrain (no module hooks; blocks are the units)"},
    UnsupportedKey{"checkpoint.writer", "not supported by zerotrain (one checkpoint writer)"},
};

constexpr std::array kDeprecated = {
    DeprecatedKey{"", "bfloat16", "bf16", "", DeprecationKind::rename},
    DeprecatedKey{"zero_optimization", "cpu_offload", "offload_optimizer", "",
                  DeprecationKind::offload_flag},
    DeprecatedKey{"zero_optimization", "cpu_offload_param", "offload_param", "",
                  DeprecationKind::offload_flag},
    DeprecatedKey{"zero_optimization", "cpu_offload_use_pin_memory",
                  "offload_param.pin_memory or offload_optimizer.pin_memory", "",
                  DeprecationKind::no_effect},
    DeprecatedKey{"zero_optimization", "stage3_gather_fp16_weights_on_model_save",
                  "stage3_gather_16bit_weights_on_model_save", "gather_16bit_weights_on_model_save",
                  DeprecationKind::rename},
};

constexpr std::string_view kSinceFp16Model =
    "unknown key; DeepSpeed >= 0.17.1 refuses this too (its fp16 and bf16 sections forbid unknown "
    "keys; older "
    "DeepSpeed ignored them)";
constexpr std::string_view kLossScaleInBf16 =
    "unknown key; an fp16 loss-scaling key, unknown in the bf16 section (bf16 needs no loss "
    "scale); DeepSpeed "
    ">= 0.17.1 refuses this too (older DeepSpeed ignored it)";
constexpr std::string_view kOldCompile =
    "unknown key; a key of DeepSpeed's former torch.compile section; DeepSpeed 0.19.6 refuses this "
    "too (its "
    "compile section now configures DeepCompile)";

constexpr std::array kOutdated = {
    OutdatedKey{"bf16.loss_scale", kLossScaleInBf16},
    OutdatedKey{"bf16.initial_scale_power", kLossScaleInBf16},
    OutdatedKey{"bf16.loss_scale_window", kLossScaleInBf16},
    OutdatedKey{"bf16.hysteresis", kLossScaleInBf16},
    OutdatedKey{"bf16.consecutive_hysteresis", kLossScaleInBf16},
    OutdatedKey{"bf16.min_loss_scale", kLossScaleInBf16},
    OutdatedKey{"fp16.opt_level", kSinceFp16Model},
    OutdatedKey{"fp16.fp16_scale_tolerance", kSinceFp16Model},
    OutdatedKey{"compile.disable", kOldCompile},
    OutdatedKey{"compile.backend", kOldCompile},
    OutdatedKey{"compile.fullgraph", kOldCompile},
    OutdatedKey{"compile.dynamic", kOldCompile},
    OutdatedKey{"compile.mode", kOldCompile},
    OutdatedKey{"compile.options", kOldCompile},
    OutdatedKey{"compile.enabled", kOldCompile},
    OutdatedKey{"compile.kwargs", kOldCompile},
};

constexpr std::array kMisplaced = {
    MisplacedKey{"offload_optimizer", "zero_optimization"},
    MisplacedKey{"offload_param", "zero_optimization"},
};

bool is_false(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_boolean() && !it->get<bool>();
}

bool is_true(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_boolean() && it->get<bool>();
}

// A compression technique is on when its "enabled" (layer_reduction) or its
// shared_parameters.enabled (the others) is true, as DeepSpeed's compression config reads them.
bool technique_on(const nlohmann::json& technique) {
  if (!technique.is_object()) return false;
  if (is_true(technique, "enabled")) return true;
  const auto shared = technique.find("shared_parameters");
  return shared != technique.end() && shared->is_object() && is_true(*shared, "enabled");
}

}  // namespace

std::optional<std::string> inert_reason(const UnsupportedKey& key, const nlohmann::json& value,
                                        const nlohmann::json& parent) {
  switch (key.inert) {
    case Inert::never:
      return std::nullopt;
    case Inert::enabled_false:
      if (!value.is_object() || !is_false(value, "enabled")) return std::nullopt;
      return std::string(
          "\"enabled\": false, so the feature is off and the section ignored, as DeepSpeed does");
    case Inert::every_technique_off:
      if (!value.is_object()) return std::nullopt;
      for (const auto& [name, technique] : value.items())
        if (technique_on(technique)) return std::nullopt;
      return std::string(
          "every technique is disabled, so the section is ignored, as DeepSpeed does");
    case Inert::size_one:
      if (!value.is_number() || value.get<double>() != 1) return std::nullopt;
      return std::string("1: no sequence parallelism, as zerotrain runs");
    case Inert::no_sequence_parallelism: {
      const auto size = parent.find("sequence_parallel_size");
      if (size != parent.end() && !(size->is_number() && size->get<double>() == 1))
        return std::nullopt;
      return std::string(
          "ignored without sequence parallelism (sequence_parallel_size is 1), as DeepSpeed does");
    }
  }
  return std::nullopt;
}

const OutdatedKey* find_outdated(std::string_view path) {
  for (const OutdatedKey& k : kOutdated)
    if (k.path == path) return &k;
  return nullptr;
}

const MisplacedKey* find_misplaced(std::string_view path) {
  for (const MisplacedKey& k : kMisplaced)
    if (k.path == path) return &k;
  return nullptr;
}

std::span<const UnsupportedKey> unsupported_keys() {
  return kUnsupported;
}

const UnsupportedKey* find_unsupported(std::string_view path) {
  for (const UnsupportedKey& k : kUnsupported)
    if (k.path == path) return &k;
  return nullptr;
}

std::vector<std::string> unsupported_names_under(std::string_view section) {
  std::vector<std::string> names;
  for (const UnsupportedKey& k : kUnsupported) {
    const size_t dot = k.path.rfind('.');
    const std::string_view parent = dot == std::string_view::npos ? "" : k.path.substr(0, dot);
    if (parent == section)
      names.emplace_back(dot == std::string_view::npos ? k.path : k.path.substr(dot + 1));
  }
  return names;
}

std::span<const DeprecatedKey> deprecated_keys() {
  return kDeprecated;
}

}  // namespace zt::config
