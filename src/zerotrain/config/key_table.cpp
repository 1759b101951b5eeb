// The tables of key_table.h. To support a key: remove it from kUnsupported and read it in the
// section's parse_*.cpp.
#include "zerotrain/config/key_table.h"

#include <array>

namespace zt::config {

namespace {

constexpr std::string_view kNoFeature = "not supported by zerotrain (no such feature)";

constexpr std::array kUnsupported = {
    UnsupportedKey{"sparse_attention", kNoFeature},
    UnsupportedKey{"pipeline", "not supported by zerotrain (no pipeline parallelism)"},
    UnsupportedKey{"progressive_layer_drop", kNoFeature},
    UnsupportedKey{"curriculum_learning", kNoFeature},
    UnsupportedKey{"data_efficiency", kNoFeature},
    UnsupportedKey{"compression_training", kNoFeature},
    UnsupportedKey{"quantize_training", kNoFeature},
    UnsupportedKey{"eigenvalue", kNoFeature},
    UnsupportedKey{"elasticity", "not supported by zerotrain (no elastic training)"},
    UnsupportedKey{"autotuning", kNoFeature},
    UnsupportedKey{"hybrid_engine", kNoFeature},
    UnsupportedKey{"nebula", kNoFeature},
    UnsupportedKey{"datastates", kNoFeature},
    UnsupportedKey{"compile", "not supported by zerotrain (no torch.compile)"},
    UnsupportedKey{"torch_autocast", "not supported by zerotrain; use bf16 or fp16"},
    UnsupportedKey{"tensor_parallel", "not supported by zerotrain (no tensor parallelism)"},
    UnsupportedKey{"expert_parallel", "not supported by zerotrain (no mixture of experts)"},
    UnsupportedKey{"weight_quantization", kNoFeature},
    UnsupportedKey{"sequence_parallel_size",
                   "not supported by zerotrain (no sequence parallelism)"},
    UnsupportedKey{"seq_parallel_comm_data_type",
                   "not supported by zerotrain (no sequence parallelism)"},
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

}  // namespace

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
