// The trainer's scheduler; see train_scheduler.h. Tested by tests/train/test_train_outputs.cpp.
#include "zerotrain/train/train_scheduler.h"

#include <string>
#include <type_traits>
#include <variant>

#include "zerotrain/optim/hf_schedule.h"

namespace zt::train {

using nlohmann::json;

json ds_scheduler_json(const config::SchedulerConfig& s, double optimizer_lr) {
  json params = std::visit(
      [optimizer_lr](const auto& p) -> json {
        using P = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<P, config::WarmupLrParams>)
          return {{"warmup_min_lr", p.warmup_min_lr},
                  {"warmup_max_lr", p.warmup_max_lr.value_or(optimizer_lr)},
                  {"warmup_num_steps", p.warmup_num_steps},
                  {"warmup_type", config::warmup_type_name(p.warmup_type)}};
        else if constexpr (std::is_same_v<P, config::WarmupDecayLrParams>)
          return {{"total_num_steps", p.total_num_steps},
                  {"warmup_min_lr", p.warmup_min_lr},
                  {"warmup_max_lr", p.warmup_max_lr},
                  {"warmup_num_steps", p.warmup_num_steps},
                  {"warmup_type", config::warmup_type_name(p.warmup_type)}};
        else if constexpr (std::is_same_v<P, config::WarmupCosineLrParams>)
          return {{"total_num_steps", p.total_num_steps},
                  {"warmup_min_ratio", p.warmup_min_ratio},
                  {"warmup_num_steps", p.warmup_num_steps},
                  {"cos_min_ratio", p.cos_min_ratio},
                  {"warmup_type", config::warmup_type_name(p.warmup_type)}};
        else if constexpr (std::is_same_v<P, config::OneCycleParams>)
          return {{"cycle_min_lr", p.cycle_min_lr},
                  {"cycle_max_lr", p.cycle_max_lr},
                  {"decay_lr_rate", p.decay_lr_rate},
                  {"cycle_first_step_size", p.cycle_first_step_size},
                  {"cycle_second_step_size", p.cycle_second_step_size.value_or(-1)},
                  {"cycle_first_stair_count", p.cycle_first_stair_count},
                  {"cycle_second_stair_count", p.cycle_second_stair_count.value_or(-1)},
                  {"decay_step_size", p.decay_step_size},
                  {"cycle_momentum", p.cycle_momentum},
                  {"cycle_min_mom", p.cycle_min_mom},
                  {"cycle_max_mom", p.cycle_max_mom},
                  {"decay_mom_rate", p.decay_mom_rate}};
        else
          return {{"lr_range_test_min_lr", p.lr_range_test_min_lr},
                  {"lr_range_test_step_size", p.lr_range_test_step_size},
                  {"lr_range_test_step_rate", p.lr_range_test_step_rate},
                  {"lr_range_test_staircase", p.lr_range_test_staircase}};
      },
      s.params);
  return {{"type", config::scheduler_type_name(s)}, {"params", std::move(params)}};
}

std::unique_ptr<optim::Scheduler> make_train_scheduler(const TrainConfig& c) {
  if (c.schedule.deepspeed) return optim::make_scheduler(*c.schedule.deepspeed, c.schedule.lr);
  optim::LrScheduleConfig hf;
  hf.kind = optim::parse_schedule_kind(c.schedule.decay);
  hf.base_lr = c.schedule.lr;
  hf.warmup_steps = c.schedule.warmup_steps;
  hf.total_steps = c.steps;
  if (hf.kind == optim::ScheduleKind::cosine) hf.min_lr_ratio = c.schedule.min_lr_ratio;
  return std::make_unique<optim::HfScheduler>(hf);
}

void restore_scheduler(optim::Scheduler& s, const json& saved, int64_t step) {
  if (!saved.is_null()) {
    s.load_state(saved);
    return;
  }
  for (int64_t i = 0; i < step; ++i)
    s.step();
}

}  // namespace zt::train
