// make_scheduler: DeepSpeed-style {"type", "params"} config blocks -> Scheduler; see scheduler.h.
// Every params key is read into the type's Params struct (defaults for the missing ones); a key
// the type does not have, or a value of the wrong JSON type, throws ValueError naming it.
// Tested by tests/optim/test_schedulers.cpp.
#include <set>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "zerotrain/core/error.h"
#include "zerotrain/optim/deepspeed_schedules.h"
#include "zerotrain/optim/hf_schedule.h"
#include "zerotrain/optim/scheduler.h"

namespace zt::optim {

namespace {

constexpr std::string_view kComponent = "scheduler";

// Reads params keys into fields, tracking which were used.
class ParamReader {
 public:
  ParamReader(std::string type, const nlohmann::json& params) : type_(std::move(type)), j_(params) {
    if (!j_.is_object())
      throw ValueError(kComponent, str(type_, ": params must be a JSON object, got ", j_.dump()));
  }

  template <class T>
  void read(const char* key, T& field) {
    used_.insert(key);
    const auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return;
    try {
      if constexpr (std::is_same_v<T, bool>) {
        if (!it->is_boolean()) throw std::invalid_argument("not a boolean");
      } else if constexpr (std::is_integral_v<T>) {
        if (!it->is_number_integer()) throw std::invalid_argument("not an integer");
      } else {
        if (!it->is_number()) throw std::invalid_argument("not a number");
      }
      field = it->get<T>();
    } catch (const std::exception&) {
      throw ValueError(kComponent, str(type_, ": params.", key, " = ", it->dump(), ": wrong type"));
    }
  }

  void read_warmup_type(WarmupType& field) {
    used_.insert("warmup_type");
    const auto it = j_.find("warmup_type");
    if (it == j_.end()) return;
    if (*it == "log")
      field = WarmupType::log;
    else if (*it == "linear")
      field = WarmupType::linear;
    else
      throw ValueError(kComponent, str(type_, ": params.warmup_type = ", it->dump(),
                                       ": expected \"log\" or \"linear\""));
  }

  // Throws for a key nothing read.
  void finish() const {
    for (const auto& [key, value] : j_.items())
      if (!used_.count(key))
        throw ValueError(kComponent, str(type_, ": unknown params key \"", key, "\""));
  }

 private:
  std::string type_;
  const nlohmann::json& j_;
  std::set<std::string, std::less<>> used_;
};

}  // namespace

std::unique_ptr<Scheduler> make_scheduler(const nlohmann::json& config, double base_lr) {
  if (!config.is_object() || !config.contains("type") || !config.at("type").is_string())
    throw ValueError(kComponent, str("config needs a string \"type\", got ", config.dump()));
  for (const auto& [key, value] : config.items())
    if (key != "type" && key != "params")
      throw ValueError(kComponent, str("unknown scheduler config key \"", key, "\""));
  const std::string type = config.at("type");
  const nlohmann::json params = config.value("params", nlohmann::json::object());
  ParamReader r(type, params);
  std::unique_ptr<Scheduler> out;
  if (type == "WarmupLR") {
    WarmupLRParams p;
    r.read("warmup_min_lr", p.warmup_min_lr);
    r.read("warmup_max_lr", p.warmup_max_lr);
    r.read("warmup_num_steps", p.warmup_num_steps);
    r.read_warmup_type(p.warmup_type);
    r.finish();
    out = std::make_unique<WarmupLR>(p);
  } else if (type == "WarmupDecayLR") {
    WarmupDecayLRParams p;
    r.read("total_num_steps", p.total_num_steps);
    r.read("warmup_min_lr", p.warmup_min_lr);
    r.read("warmup_max_lr", p.warmup_max_lr);
    r.read("warmup_num_steps", p.warmup_num_steps);
    r.read_warmup_type(p.warmup_type);
    r.finish();
    out = std::make_unique<WarmupDecayLR>(p);
  } else if (type == "WarmupCosineLR") {
    WarmupCosineLRParams p;
    p.base_lr = base_lr;
    r.read("total_num_steps", p.total_num_steps);
    r.read("warmup_min_ratio", p.warmup_min_ratio);
    r.read("warmup_num_steps", p.warmup_num_steps);
    r.read("cos_min_ratio", p.cos_min_ratio);
    r.read_warmup_type(p.warmup_type);
    r.finish();
    out = std::make_unique<WarmupCosineLR>(p);
  } else if (type == "OneCycle") {
    OneCycleParams p;
    r.read("cycle_min_lr", p.cycle_min_lr);
    r.read("cycle_max_lr", p.cycle_max_lr);
    r.read("decay_lr_rate", p.decay_lr_rate);
    r.read("cycle_first_step_size", p.cycle_first_step_size);
    r.read("cycle_second_step_size", p.cycle_second_step_size);
    r.read("cycle_first_stair_count", p.cycle_first_stair_count);
    r.read("cycle_second_stair_count", p.cycle_second_stair_count);
    r.read("decay_step_size", p.decay_step_size);
    r.read("cycle_momentum", p.cycle_momentum);
    r.read("cycle_min_mom", p.cycle_min_mom);
    r.read("cycle_max_mom", p.cycle_max_mom);
    r.read("decay_mom_rate", p.decay_mom_rate);
    r.finish();
    out = std::make_unique<OneCycle>(p);
  } else if (type == "LRRangeTest") {
    LRRangeTestParams p;
    r.read("lr_range_test_min_lr", p.lr_range_test_min_lr);
    r.read("lr_range_test_step_size", p.lr_range_test_step_size);
    r.read("lr_range_test_step_rate", p.lr_range_test_step_rate);
    r.read("lr_range_test_staircase", p.lr_range_test_staircase);
    r.finish();
    out = std::make_unique<LRRangeTest>(p);
  } else if (type == "constant" || type == "constant_with_warmup" || type == "linear" ||
             type == "cosine" || type == "cosine_with_min_lr") {
    LrScheduleConfig c;
    c.kind = parse_schedule_kind(type);
    c.base_lr = base_lr;
    r.read("warmup_steps", c.warmup_steps);
    r.read("total_steps", c.total_steps);
    r.read("min_lr_ratio", c.min_lr_ratio);
    r.read("num_cycles", c.num_cycles);
    r.finish();
    out = std::make_unique<HfScheduler>(c);
  } else {
    throw ValueError(kComponent, str("unknown scheduler type \"", type,
                                     "\": expected WarmupLR, WarmupDecayLR, WarmupCosineLR, "
                                     "OneCycle, LRRangeTest, constant, constant_with_warmup, "
                                     "linear, cosine or cosine_with_min_lr"));
  }
  return out;
}

}  // namespace zt::optim
