// scheduler {type, params}: DeepSpeed's WarmupLR, WarmupDecayLR, WarmupCosineLR, OneCycle and
// LRRangeTest (deepspeed/runtime/lr_schedules.py) with their parameter names and defaults. The
// type is case-sensitive, as in DeepSpeed. The one parse of a scheduler: the ds_config's section
// and parse_scheduler_block (scheduler_config.h) both come here.
#include <algorithm>

#include "zerotrain/config/nearest_name.h"
#include "zerotrain/config/parse_sections.h"
#include "zerotrain/core/error.h"

namespace zt::config {

namespace {

const std::vector<std::string> kTypes = {"WarmupLR", "WarmupDecayLR", "WarmupCosineLR", "OneCycle",
                                         "LRRangeTest"};

size_t read_type(Section& s) {
  const Json* v = s.get_raw("type");
  const std::string path = s.path_of("type");
  const std::string accepted =
      "expected one of WarmupLR, WarmupDecayLR, WarmupCosineLR, OneCycle, LRRangeTest";
  if (!v) fail(path, str("missing; ", accepted));
  if (!v->is_string()) wrong_type(path, "a string", *v);
  const std::string name = v->get<std::string>();
  for (size_t i = 0; i < kTypes.size(); ++i)
    if (name == kTypes[i]) return i;
  const auto near = nearest_name(name, kTypes);
  fail(path, str("unknown scheduler \"", name, "\"",
                 near ? str("; did you mean \"", *near, "\"?") : str("; ", accepted)));
}

WarmupType read_warmup_type(Section& p) {
  return static_cast<WarmupType>(p.get_choice("warmup_type", {"log", "linear"}, 0, false));
}

int64_t required_int(Section& p, const char* key, int64_t min) {
  const std::optional<int64_t> v = p.get_opt_int(key, min);
  if (!v) fail(p.path_of(key), "missing (required by this scheduler)");
  return *v;
}

double required_double(Section& p, const char* key) {
  const std::optional<double> v = p.get_opt_double(key);
  if (!v) fail(p.path_of(key), "missing (required by this scheduler)");
  return *v;
}

WarmupLrParams read_warmup_lr(Section& p) {
  WarmupLrParams w;
  w.warmup_min_lr = p.get_double("warmup_min_lr", w.warmup_min_lr, 0.0);
  w.warmup_max_lr = p.get_opt_double("warmup_max_lr");
  w.warmup_num_steps = p.get_int("warmup_num_steps", w.warmup_num_steps, 0);
  w.warmup_type = read_warmup_type(p);
  w.last_batch_iteration = p.get_int("last_batch_iteration", w.last_batch_iteration, -1);
  return w;
}

WarmupDecayLrParams read_warmup_decay(Section& p) {
  WarmupDecayLrParams w;
  w.total_num_steps = required_int(p, "total_num_steps", 1);
  w.warmup_min_lr = p.get_double("warmup_min_lr", w.warmup_min_lr, 0.0);
  w.warmup_max_lr = p.get_double("warmup_max_lr", w.warmup_max_lr, 0.0);
  w.warmup_num_steps = p.get_int("warmup_num_steps", w.warmup_num_steps, 0);
  w.warmup_type = read_warmup_type(p);
  w.last_batch_iteration = p.get_int("last_batch_iteration", w.last_batch_iteration, -1);
  return w;
}

WarmupCosineLrParams read_warmup_cosine(Section& p) {
  WarmupCosineLrParams w;
  w.total_num_steps = required_int(p, "total_num_steps", 1);
  w.warmup_min_ratio = p.get_double("warmup_min_ratio", w.warmup_min_ratio, 0.0, 1.0);
  w.warmup_num_steps = p.get_int("warmup_num_steps", w.warmup_num_steps, 0);
  w.cos_min_ratio = p.get_double("cos_min_ratio", w.cos_min_ratio, 0.0, 1.0);
  w.warmup_type = read_warmup_type(p);
  w.last_batch_iteration = p.get_int("last_batch_iteration", w.last_batch_iteration, -1);
  return w;
}

OneCycleParams read_one_cycle(Section& p) {
  OneCycleParams c;
  c.cycle_min_lr = required_double(p, "cycle_min_lr");
  c.cycle_max_lr = required_double(p, "cycle_max_lr");
  c.decay_lr_rate = p.get_double("decay_lr_rate", c.decay_lr_rate);
  c.cycle_first_step_size = p.get_int("cycle_first_step_size", c.cycle_first_step_size, 1);
  c.cycle_second_step_size = p.get_opt_int("cycle_second_step_size", 1);
  c.cycle_first_stair_count = p.get_int("cycle_first_stair_count", c.cycle_first_stair_count, 0);
  c.cycle_second_stair_count = p.get_opt_int("cycle_second_stair_count", 0);
  c.decay_step_size = p.get_int("decay_step_size", c.decay_step_size, 0);
  c.cycle_momentum = p.get_bool("cycle_momentum", c.cycle_momentum);
  c.cycle_min_mom = p.get_double("cycle_min_mom", c.cycle_min_mom);
  c.cycle_max_mom = p.get_double("cycle_max_mom", c.cycle_max_mom);
  c.decay_mom_rate = p.get_double("decay_mom_rate", c.decay_mom_rate);
  c.last_batch_iteration = p.get_int("last_batch_iteration", c.last_batch_iteration, -1);
  return c;
}

LrRangeTestParams read_range_test(Section& p) {
  LrRangeTestParams r;
  r.lr_range_test_min_lr = p.get_double("lr_range_test_min_lr", r.lr_range_test_min_lr, 0.0);
  r.lr_range_test_step_size = p.get_int("lr_range_test_step_size", r.lr_range_test_step_size, 1);
  r.lr_range_test_step_rate = p.get_double("lr_range_test_step_rate", r.lr_range_test_step_rate);
  r.lr_range_test_staircase = p.get_bool("lr_range_test_staircase", r.lr_range_test_staircase);
  r.last_batch_iteration = p.get_int("last_batch_iteration", r.last_batch_iteration, -1);
  return r;
}

}  // namespace

void parse_scheduler(Section& s, SchedulerConfig& sc) {
  const size_t type = read_type(s);
  const Json empty = Json::object();
  const Json* raw = s.get_raw("params");
  Section p(raw ? *raw : empty, s.path_of("params"));
  switch (type) {
    case 0:
      sc.params = read_warmup_lr(p);
      break;
    case 1:
      sc.params = read_warmup_decay(p);
      break;
    case 2:
      sc.params = read_warmup_cosine(p);
      break;
    case 3:
      sc.params = read_one_cycle(p);
      break;
    default:
      sc.params = read_range_test(p);
      break;
  }
  p.finish();
  s.finish();
}

std::string scheduler_type_name(const SchedulerConfig& s) {
  return kTypes[s.params.index()];
}

bool is_scheduler_type(const std::string& name) {
  return std::find(kTypes.begin(), kTypes.end(), name) != kTypes.end();
}

SchedulerConfig parse_scheduler_block(const nlohmann::json& block) {
  if (!block.is_object()) wrong_type("scheduler", "an object", block);
  Section s(block, "scheduler");
  SchedulerConfig sc;
  parse_scheduler(s, sc);
  return sc;
}

}  // namespace zt::config
