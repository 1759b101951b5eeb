// `zerotrain train --deepspeed ds_config.json`: the command line's values as the overrides that
// resolve the file's "auto" entries, and the resolved DeepSpeed configuration mapped onto the
// TrainConfig fields that exist. A setting the trainer cannot run yet is an error
// "[config] <key>: not supported yet by zerotrain train" (the one list is in
// ds_train_config.cpp; it shrinks as features land), never silently ignored.
// See [Note: activation checkpointing] and [Note: fp16 in ds_config] below. Tested by
// tests/config/test_ds_train_config.cpp.
//
// [Note: activation checkpointing]
// In DeepSpeed the `activation_checkpointing` section configures checkpointing and the model
// calls deepspeed.checkpointing.checkpoint on its blocks. zerotrain's models are its own, so a
// present section turns on per-block checkpointing (TrainConfig::activation_checkpointing);
// partition_activations, contiguous_memory_optimization, number_checkpoints,
// synchronize_checkpoint_boundary and profile change nothing in one process, cpu_checkpointing
// is not supported yet.
//
// [Note: fp16 in ds_config]
// fp16.enabled trains in f16 (TrainConfig::precision.dtype) with DeepSpeed's loss scaler:
// loss_scale > 0 is a static scale, 0 the dynamic one of initial_scale_power, loss_scale_window,
// hysteresis, consecutive_hysteresis and min_loss_scale (train/loss_scaler.h). auto_cast casts a
// model's floating inputs to fp16 in DeepSpeed; zerotrain's inputs are token ids, so it changes
// nothing. fp16_master_weights_and_grads is not supported (masters and gradients stay f32).
#pragma once

#include <cstdint>
#include <optional>

#include "zerotrain/config/ds_config.h"
#include "zerotrain/config/overrides.h"
#include "zerotrain/train/trainer.h"

namespace zt::train {

using config::GivenFlags;

// Every TrainConfig value fills an "auto"; the given ones (flag names, "--zero-stage") also fill
// missing keys and must agree with the file (resolve_auto.h). The world size is c.comm's (1 without
// one).
config::ConfigOverrides train_overrides(const TrainConfig& c, const GivenFlags& given,
                                        std::optional<int64_t> hidden_size);

// Sets micro_batch, grad_accum, clip, dtype (and fp16's loss scaler), precision (low when
// bf16.bf16_master_weights_and_grads and bf16.bf16_optimizer_states are both on), the Adam
// hyper-parameters and variant (adam_w_mode / type AdamW, amsgrad, bias_correction), log_every,
// activation_checkpointing, grad_accum_dtype (data_types.grad_accum_dtype), comm_dtype
// (communication_data_type; both stay f32 when unset, not DeepSpeed's defaults: see [Note:
// communication dtype] in zero/grad_comm.h), the scheduler, wall_clock_breakdown (on when the file
// or the flag says so), csv_monitor_dir and tensorboard_dir (each <output_path>/<job_name>),
// wandb and the ZeRO section from `ds`: one function per section. Throws ValueError for an
// unsupported setting or one that contradicts a given flag (naming both); the values are checked
// once, by validate_train_config (trainer.h).
void apply_ds_config(const config::DsConfig& ds, const GivenFlags& given, TrainConfig& c);

}  // namespace zt::train
