// One interface over every learning-rate scheduler: DeepSpeed's (WarmupLR, WarmupDecayLR,
// WarmupCosineLR, OneCycle, LRRangeTest; deepspeed_schedules.h) and Hugging Face's constant /
// linear / cosine with warmup (hf_schedule.h), with a state that saves to and restores from JSON.
// Tested by tests/optim/test_schedulers.cpp.
//
// [Note: scheduler iterations]
// A scheduler counts as DeepSpeed does: last_batch_iteration starts at -1, the lr() it reports is
// the one the next optimizer update uses, and step() (called after each update) adds one. So
// update k (1-based) runs at lr_at(k - 2) for the DeepSpeed schedules (their constructor sets the
// lr of iteration -1 for the first update, then DeepSpeed's engine steps the scheduler after every
// update). The HF schedules keep LambdaLR's numbering on top of that: lr_at(it) = base_lr *
// factor(it + 1), so update k runs at factor(k - 1) exactly as in transformers' Trainer.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "zerotrain/config/scheduler_config.h"

namespace zt::optim {

// Adam's betas as OneCycle sets them: (momentum, 0.99), DeepSpeed's fixed second beta.
struct Betas {
  double beta1 = 0.9;
  double beta2 = 0.999;
};

class Scheduler {
 public:
  virtual ~Scheduler() = default;

  // DeepSpeed's type name ("WarmupLR", ...) or HF's ("linear", ...).
  virtual std::string_view type() const = 0;
  // The lr at last_batch_iteration = it (it >= -1).
  virtual double lr_at(int64_t it) const = 0;
  // The betas at `it`, for schedulers that cycle momentum (OneCycle); empty for the others.
  virtual std::optional<Betas> betas_at(int64_t it) const { return std::nullopt; }

  double lr() const { return lr_at(last_batch_iteration_); }
  std::optional<Betas> betas() const { return betas_at(last_batch_iteration_); }
  void step() { ++last_batch_iteration_; }
  int64_t last_batch_iteration() const { return last_batch_iteration_; }

  // {"type": ..., "last_batch_iteration": k, "lr": current lr, "betas": [b1, b2] when cycled};
  // load_state needs the same type and restores the iteration (lr and betas follow from it).
  // Throws ValueError naming the bad key or value.
  nlohmann::json state() const;
  void load_state(const nlohmann::json& state);

 protected:
  int64_t last_batch_iteration_ = -1;
};

// Builds a DeepSpeed scheduler from its typed section (a ds_config's scheduler, parsed once).
// `base_lr` is the optimizer's lr, which WarmupCosineLR scales. Throws ValueError for a
// last_batch_iteration other than -1.
std::unique_ptr<Scheduler> make_scheduler(const config::SchedulerConfig& config, double base_lr);

// Builds a scheduler from a config block {"type": T, "params": {...}} (params optional for
// schedules with defaults): DeepSpeed's types through config::parse_scheduler_block, HF's
// constant / linear / cosine (which decay from `base_lr`) read here. Unknown types and unknown
// params throw ValueError naming them.
std::unique_ptr<Scheduler> make_scheduler(const nlohmann::json& config, double base_lr);

}  // namespace zt::optim
