// A DeepSpeed `scheduler` section as typed values (deepspeed/runtime/lr_schedules.py's parameter
// names and defaults): what config/parse_scheduler.cpp reads, the one parse of a scheduler, and
// what optim::make_scheduler builds the schedule from (optim/deepspeed_schedules.h). Tested by
// tests/config/test_ds_config_corpus.cpp and tests/optim/test_schedulers.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

namespace zt::config {

// Schedulers (scheduler.type, case-sensitive as in DeepSpeed).
enum class WarmupType { log, linear };
struct WarmupLrParams {
  double warmup_min_lr = 0.0;
  // Unset: DeepSpeed's 0.001 (optim::make_scheduler); zerotrain train sets the optimizer's lr
  // (train/ds_train_config.cpp), as the command line's --lr means.
  std::optional<double> warmup_max_lr;
  int64_t warmup_num_steps = 1000;
  WarmupType warmup_type = WarmupType::log;
  int64_t last_batch_iteration = -1;
};
struct WarmupDecayLrParams {
  int64_t total_num_steps = 0;  // required
  double warmup_min_lr = 0.0;
  double warmup_max_lr = 0.001;
  int64_t warmup_num_steps = 1000;
  WarmupType warmup_type = WarmupType::log;
  int64_t last_batch_iteration = -1;
};
struct WarmupCosineLrParams {
  int64_t total_num_steps = 0;  // required
  double warmup_min_ratio = 0.0;
  int64_t warmup_num_steps = 1000;
  double cos_min_ratio = 0.0001;
  WarmupType warmup_type = WarmupType::log;
  int64_t last_batch_iteration = -1;
};
struct OneCycleParams {
  double cycle_min_lr = 0.0;  // required
  double cycle_max_lr = 0.0;  // required
  double decay_lr_rate = 0.0;
  int64_t cycle_first_step_size = 2000;
  std::optional<int64_t> cycle_second_step_size;  // unset: cycle_first_step_size
  int64_t cycle_first_stair_count = 0;
  std::optional<int64_t> cycle_second_stair_count;  // unset: cycle_first_stair_count
  int64_t decay_step_size = 0;
  bool cycle_momentum = true;
  double cycle_min_mom = 0.8;
  double cycle_max_mom = 0.9;
  double decay_mom_rate = 0.0;
  int64_t last_batch_iteration = -1;
};
struct LrRangeTestParams {
  double lr_range_test_min_lr = 1e-3;
  int64_t lr_range_test_step_size = 2000;
  double lr_range_test_step_rate = 1.0;
  bool lr_range_test_staircase = false;
  int64_t last_batch_iteration = -1;
};
struct SchedulerConfig {
  std::variant<WarmupLrParams, WarmupDecayLrParams, WarmupCosineLrParams, OneCycleParams,
               LrRangeTestParams>
      params;
};

std::string scheduler_type_name(const SchedulerConfig& s);  // "WarmupLR", ...
std::string warmup_type_name(WarmupType t);                 // "log", "linear"
bool is_scheduler_type(const std::string& name);            // one of the five DeepSpeed types

// One `{"type", "params"}` block read as the ds_config parser reads its scheduler section (keys
// named "scheduler.params.<key>" in errors). Throws ValueError naming the bad key or value.
SchedulerConfig parse_scheduler_block(const nlohmann::json& block);

}  // namespace zt::config
