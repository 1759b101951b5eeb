// The trainer's learning-rate scheduler: a DeepSpeed `scheduler` section
// (TrainConfig::schedule.deepspeed, from --deepspeed) or the Hugging Face schedule of --schedule /
// --warmup / --min-lr-ratio, both behind optim::Scheduler, stepped as DeepSpeed's engine does (see
// [Note: trainer scheduler]). Tested by tests/train/test_train_outputs.cpp and
// tests/train/test_trainer_resume.cpp.
//
// [Note: trainer scheduler]
// Update k (1-based) runs at scheduler.lr() and the scheduler steps once after it, also when a
// non-finite gradient skipped the update of an f32/bf16 run, so that the lr sequence depends on the
// step number only; an fp16 overflow steps neither, as in DeepSpeed ([Note: fp16 step]).
// With the HF schedules that is exactly the old lr_at(k - 1) (optim's [Note: scheduler
// iterations]). OneCycle with cycle_momentum sets AdamW's betas before every update, as DeepSpeed
// does (beta1 = the cycled momentum, beta2 = 0.99). A ds_config without a scheduler section runs
// the command line's --schedule (default cosine), not DeepSpeed's constant lr: the flags keep
// meaning what they say whether or not a file is given.
#pragma once

#include <cstdint>
#include <memory>

#include <nlohmann/json.hpp>

#include "zerotrain/config/ds_config.h"
#include "zerotrain/optim/scheduler.h"
#include "zerotrain/train/trainer.h"

namespace zt::train {

// The record of a ds_config scheduler in a checkpoint's train_state.json ("config"."scheduler",
// resume_config_json): {"type", "params"} with the values the run used, WarmupLR's unset
// warmup_max_lr as `optimizer_lr`. Written only, never parsed back.
nlohmann::json ds_scheduler_json(const config::SchedulerConfig& s, double optimizer_lr);

// The scheduler of `c`: make_scheduler(c.schedule.deepspeed, c.schedule.lr) when set, else the HF
// schedule.
std::unique_ptr<optim::Scheduler> make_train_scheduler(const TrainConfig& c);

// On --resume: the saved state (Scheduler::state()) when the checkpoint has one, else the
// iteration after `step` updates (checkpoints written before schedulers were saved).
void restore_scheduler(optim::Scheduler& s, const nlohmann::json& saved, int64_t step);

}  // namespace zt::train
