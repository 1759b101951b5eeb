// "auto" in a ds_config, resolved the way the Hugging Face Trainer does (transformers'
// HfTrainerDeepSpeedConfig.trainer_config_process / trainer_config_finalize):
//   train_micro_batch_size_per_gpu <- --micro-batch      gradient_accumulation_steps <-
//   --grad-accum train_batch_size <- micro * grad_accum * world_size  gradient_clipping <- --clip
//   optimizer.params: lr <- --lr, betas <- [--beta1, --beta2], eps <- --eps,
//                     weight_decay <- --weight-decay
//   scheduler.params: warmup_min_lr <- 0, warmup_max_lr <- --lr, warmup_num_steps <- --warmup,
//                     total_num_steps <- --steps
//   fp16.enabled <- (--dtype fp16)   bf16.enabled <- (--dtype bf16)   amp.enabled <- false
//   zero_optimization.reduce_bucket_size <- hidden^2, and with stage 3:
//     stage3_prefetch_bucket_size <- int(0.9 hidden^2), stage3_param_persistence_threshold <- 10
//     hidden
//   zero_optimization.stage, reduce_bucket_size, stage3_param_persistence_threshold,
//     stage3_prefetch_bucket_size, stage3_max_live_parameters <- the given --zero-stage,
//     --reduce-bucket-size, --stage3-* flags (no "auto" of their own); sub_group_size,
//     offload_optimizer.device and offload_param.device <- --sub-group-size, --offload-optimizer,
//     --offload-param; the offloaded sections' nvme_path and pin_memory <- --nvme-path,
//     --pin-memory (an error when no section offloads to where they apply)
// A value the user gave explicitly (ConfigOverrides::given) must equal a value the file sets (an
// error names both) and fills a key the file leaves out. An "auto" nothing resolves stays in place
// where a trainer would fill it: the parser then names the key and the flag that would resolve it
// (auto_hint). Inside a section DeepSpeed validates as a pydantic model, an "auto" no trainer
// fills is dropped with a warning, so the key takes DeepSpeed's default ([Note: auto no trainer
// fills] in resolve_auto.cpp). Tested by tests/config/test_resolve_auto.cpp.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "zerotrain/config/json_walk.h"
#include "zerotrain/config/overrides.h"

namespace zt::config {

// Rewrites `root` (an object, after apply_deprecations) in place; notes go to `warnings`.
void resolve_auto(Json& root, const ConfigOverrides& overrides, std::vector<std::string>& warnings);

// What would resolve an "auto" at `path` ("pass --lr"), or "" when zerotrain never resolves it.
std::string auto_hint(std::string_view path);

}  // namespace zt::config
