// What an Accelerate config (accelerate_config.h) trains with, as one DeepSpeed config that
// `zerotrain train` then reads like a --deepspeed file ("auto" filled from the flags as the
// Trainer fills it, a given flag agreeing with a set key):
//   DEEPSPEED, plugin keys: the config Accelerate's DeepSpeedPlugin builds (train_batch_size,
//     train_micro_batch_size_per_gpu and, unless set, gradient_accumulation_steps "auto";
//     zero_optimization's stage (default 2), offload devices and NVMe paths,
//     stage3_gather_16bit_weights_on_model_save; gradient_clipping when set and non-zero);
//   DEEPSPEED, deepspeed_config_file: that JSON, with gradient_accumulation_steps 1 when it has
//     none and a zero_optimization section required, as Accelerate does;
//   FSDP: FULL_SHARD / SHARD_GRAD_OP / NO_SHARD -> stage 3 / 2 / 0, HYBRID_SHARD(_ZERO2) -> stage
//     3 (2) sharded within each machine (zero_hpz_partition_size = processes per machine);
//     fsdp_offload_params -> offload_param and offload_optimizer cpu (the optimizer alone at
//     stage 2); fsdp_activation_checkpointing -> an activation_checkpointing section;
//     FULL_STATE_DICT -> every checkpoint also holds the gathered weights; batch, accumulation
//     and clipping "auto" (the training script's, i.e. the flags');
//   MULTI_GPU, MULTI_CPU, NO: stage 0, batch, accumulation and clipping "auto".
// mixed_precision then sets the fp16/bf16 sections as Accelerate's set_mixed_precision does
// (fills "auto", adds the section when absent, refuses the other type enabled in the file), with
// one FSDP rule from Accelerate's precision story (seed 000): no mixed precision and a model
// loaded in bf16 (--dtype bf16) is the low-precision mode (bf16 weights and optimizer states, no
// f32 masters). Tested by tests/config/test_accelerate_config.cpp.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "zerotrain/config/accelerate_config.h"

namespace zt::config {

struct AccelerateRun {
  nlohmann::json ds_config;  // a ds_config object, "auto" entries still in place
  std::string ds_source;     // how errors name it: the JSON file, or the YAML file
  bool zero_init = true;     // stage 3 builds each rank's shards only (zero3_init_flag, FSDP's
                             // cpu_ram_efficient_loading); the results are the same either way
  std::vector<std::string> warnings;  // one line each, "[accelerate] ..."
};

// `given_dtype`: --dtype when the user typed it ("f32", "bf16", "fp16"), the dtype an FSDP model
// without mixed precision is loaded in. Throws ValueError naming the YAML key.
AccelerateRun accelerate_ds_config(const AccelerateConfig& a,
                                   const std::optional<std::string>& given_dtype);

}  // namespace zt::config
