// make_scheduler: a typed DeepSpeed scheduler (config/scheduler_config.h) or a {"type", "params"}
// block -> Scheduler; see scheduler.h. A block's DeepSpeed types go through the ds_config parser
// (the one parse of a scheduler); the Hugging Face types' keys are read here. A key the type does
// not have, or a value of the wrong JSON type, throws ValueError naming it.
// Tested by tests/optim/test_schedulers.cpp.
#include <set>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <variant>

#include "zerotrain/config/scheduler_config.h"
#include "zerotrain/core/error.h"
#include "zerotrain/core/json_util.h"
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
      throw ValueError(kComponent,
                       str(type_, ": params must be a JSON object, got ", describe_json(j_)));
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

std::unique_ptr<Scheduler> make_scheduler(const config::SchedulerConfig& config, double base_lr) {
  return std::visit(
      [base_lr](const auto& p) -> std::unique_ptr<Scheduler> {
        using P = std::decay_t<decltype(p)>;
        if (p.last_batch_iteration != -1)
          throw ValueError(kComponent, str(config::scheduler_type_name({p}),
                                           ": last_batch_iteration = ", p.last_batch_iteration,
                                           ": starting a schedule part-way is not supported"));
        if constexpr (std::is_same_v<P, config::WarmupLrParams>)
          return std::make_unique<WarmupLR>(p);
        else if constexpr (std::is_same_v<P, config::WarmupDecayLrParams>)
          return std::make_unique<WarmupDecayLR>(p);
        else if constexpr (std::is_same_v<P, config::WarmupCosineLrParams>)
          return std::make_unique<WarmupCosineLR>(p, base_lr);
        else if constexpr (std::is_same_v<P, config::OneCycleParams>)
          return std::make_unique<OneCycle>(p);
        else
          return std::make_unique<LRRangeTest>(p);
      },
      config.params);
}

std::unique_ptr<Scheduler> make_scheduler(const nlohmann::json& config, double base_lr) {
  if (!config.is_object() || !config.contains("type") || !config.at("type").is_string())
    throw ValueError(kComponent,
                     str("config needs a string \"type\", got ", describe_json(config)));
  for (const auto& [key, value] : config.items())
    if (key != "type" && key != "params")
      throw ValueError(kComponent, str("unknown scheduler config key \"", key, "\""));
  const std::string type = config.at("type");
  // DeepSpeed's schedulers: read by the ds_config parser, the one parse of them.
  if (config::is_scheduler_type(type))
    return make_scheduler(config::parse_scheduler_block(config), base_lr);
  const nlohmann::json params = config.value("params", nlohmann::json::object());
  ParamReader r(type, params);
  if (type == "constant" || type == "constant_with_warmup" || type == "linear" ||
      type == "cosine" || type == "cosine_with_min_lr") {
    LrScheduleConfig c;
    c.kind = parse_schedule_kind(type);
    c.base_lr = base_lr;
    r.read("warmup_steps", c.warmup_steps);
    r.read("total_steps", c.total_steps);
    r.read("min_lr_ratio", c.min_lr_ratio);
    r.read("num_cycles", c.num_cycles);
    r.finish();
    return std::make_unique<HfScheduler>(c);
  }
  throw ValueError(kComponent, str("unknown scheduler type \"", type,
                                   "\": expected WarmupLR, WarmupDecayLR, WarmupCosineLR, "
                                   "OneCycle, LRRangeTest, constant, constant_with_warmup, "
                                   "linear, cosine or cosine_with_min_lr"));
}

}  // namespace zt::optim
