// The "auto" rules of resolve_auto.h, applied to the JSON before it is parsed.
#include "zerotrain/config/resolve_auto.h"

#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "zerotrain/config/lax_coercion.h"
#include "zerotrain/config/load.h"
#include "zerotrain/config/zero_key_table.h"
#include "zerotrain/core/error.h"

namespace zt::config {

namespace {

constexpr std::string_view kHiddenHint =
    "pass --hidden-size (zerotrain train reads it from --model)";

struct Hint {
  std::string_view path;
  std::string_view hint;
};
// zero_optimization's "auto" hints are those of zero_key_table.h's rows the hidden size fills.
constexpr std::array kHints = {
    Hint{"train_micro_batch_size_per_gpu", "pass --micro-batch"},
    Hint{"gradient_accumulation_steps", "pass --grad-accum"},
    Hint{
        "train_batch_size",
        "pass --micro-batch and --grad-accum (train_batch_size = micro * grad_accum * world_size)"},
    Hint{"gradient_clipping", "pass --clip"},
    Hint{"optimizer.params.lr", "pass --lr"},
    Hint{"optimizer.params.betas", "pass --beta1 and --beta2"},
    Hint{"optimizer.params.eps", "pass --eps"},
    Hint{"optimizer.params.weight_decay", "pass --weight-decay"},
    Hint{"scheduler.params.warmup_max_lr", "pass --lr"},
    Hint{"scheduler.params.warmup_num_steps", "pass --warmup"},
    Hint{"scheduler.params.total_num_steps", "pass --steps"},
    Hint{"fp16.enabled", "pass --dtype"},
    Hint{"bf16.enabled", "pass --dtype"},
};

constexpr std::string_view kZero = "zero_optimization.";

// The zero_optimization row of `path` that the hidden size fills, or nullptr.
const ZeroKey* hidden_filled(std::string_view path) {
  if (!path.starts_with(kZero)) return nullptr;
  const ZeroKey* k = find_zero_key(path.substr(kZero.size()));
  return k && k->hidden_auto ? k : nullptr;
}

bool is_auto(const Json& v) {
  return v.is_string() && v.get<std::string>() == "auto";
}

// The object holding the last component of `path`, or nullptr when a parent is missing.
Json* parent_of(Json& root, std::string_view path, std::string& last) {
  Json* node = &root;
  size_t start = 0;
  for (size_t dot = path.find('.'); dot != std::string_view::npos; dot = path.find('.', start)) {
    const std::string part(path.substr(start, dot - start));
    const auto it = node->find(part);
    if (it == node->end() || !it->is_object()) return nullptr;
    node = &*it;
    start = dot + 1;
  }
  last = std::string(path.substr(start));
  return node;
}

bool same(const Json& a, const Json& b) {
  if (a.is_number() && b.is_number()) return a.get<double>() == b.get<double>();
  if (a.is_array() && b.is_array()) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!same(a[i], b[i])) return false;
    return true;
  }
  return a == b;
}

// Whether the file's value `a` at `path` equals `b` as DeepSpeed reads it: in a section it
// validates as a pydantic model, "true" is true and "2" is 2 (lax_coercion.h).
bool agrees(std::string_view path, const Json& a, const Json& b) {
  if (same(a, b)) return true;
  if (!a.is_string() || !validated_leniently(path.substr(0, path.find('.')))) return false;
  if (b.is_boolean()) return lax_bool(a) == b.get<bool>();
  if (b.is_number()) return lax_double(a) == b.get<double>();
  return false;
}

// One key: "auto" takes `value`; an explicit value fills a missing key and must match a set one.
void apply(Json& root, std::string_view path, const std::optional<Json>& value, bool given,
           std::string_view flag) {
  std::string key;
  Json* parent = parent_of(root, path, key);
  if (!parent) return;
  const auto it = parent->find(key);
  if (it == parent->end() || it->is_null()) {
    if (given && value) (*parent)[key] = *value;
  } else if (is_auto(*it)) {
    if (value) *it = *value;
  } else if (given && value && !agrees(path, *it, *value)) {
    fail(path, str("the config gives ", it->dump(), " but ", flag, " gives ", value->dump(),
                   "; make them agree or set \"auto\""));
  }
}

template <typename T>
std::optional<Json> json_of(const std::optional<T>& v) {
  return v ? std::optional<Json>(*v) : std::nullopt;
}

bool given(const ConfigOverrides& o, std::string_view flag) {
  return o.given.contains(flag);
}

// A number that is an integer fitting int64 (2 or 2.0); anything else (2e47, 2.5, a string) is
// left for the key's own validation to name.
std::optional<int64_t> int_at(const Json& root, const char* key) {
  const auto it = root.find(key);
  if (it == root.end() || !it->is_number()) return std::nullopt;
  if (it->is_number_float()) {
    const double d = it->get<double>();
    if (!std::isfinite(d) || std::trunc(d) != d || std::fabs(d) >= 9.2233720368547758e18)
      return std::nullopt;  // 2^63 is the first double outside int64
    return static_cast<int64_t>(d);
  }
  if (it->is_number_unsigned() &&
      it->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    return std::nullopt;
  return it->get<int64_t>();
}

void resolve_batch(Json& root, const ConfigOverrides& o) {
  apply(root, "train_micro_batch_size_per_gpu", json_of(o.micro_batch), given(o, "--micro-batch"),
        "--micro-batch");
  apply(root, "gradient_accumulation_steps", json_of(o.grad_accum), given(o, "--grad-accum"),
        "--grad-accum");
  const auto it = root.find("train_batch_size");
  if (it == root.end() || !is_auto(*it)) return;
  // As HF: world_size * micro * grad_accum, from the values just resolved. A file without
  // gradient_accumulation_steps accumulates once (DeepSpeed's rule when only micro is known).
  const std::optional<int64_t> micro = int_at(root, "train_micro_batch_size_per_gpu");
  std::optional<int64_t> gas = int_at(root, "gradient_accumulation_steps");
  if (!root.contains("gradient_accumulation_steps")) gas = 1;
  int64_t product = 0;
  if (micro && gas && !__builtin_mul_overflow(*micro, *gas, &product) &&
      !__builtin_mul_overflow(product, o.world_size, &product))
    *it = product;
}

void resolve_optimizer(Json& root, const ConfigOverrides& o) {
  apply(root, "optimizer.params.lr", json_of(o.lr), given(o, "--lr"), "--lr");
  std::optional<Json> betas;
  if (o.beta1 && o.beta2) betas = Json::array({*o.beta1, *o.beta2});
  apply(root, "optimizer.params.betas", betas, given(o, "--beta1") || given(o, "--beta2"),
        "--beta1/--beta2");
  apply(root, "optimizer.params.eps", json_of(o.eps), given(o, "--eps"), "--eps");
  apply(root, "optimizer.params.weight_decay", json_of(o.weight_decay), given(o, "--weight-decay"),
        "--weight-decay");
  apply(root, "gradient_clipping", json_of(o.clip), given(o, "--clip"), "--clip");
}

// A given flag fills a missing key only in the schedulers that have it (WarmupCosineLR has no
// warmup_max_lr, WarmupLR no total_num_steps, OneCycle and LRRangeTest neither); "auto" resolves
// wherever it is, so that a misplaced one still reaches the parser's unknown-key error.
void resolve_scheduler(Json& root, const ConfigOverrides& o) {
  const auto s = root.find("scheduler");
  const std::string type =
      s != root.end() && s->is_object() && s->contains("type") && (*s)["type"].is_string()
          ? (*s)["type"].get<std::string>()
          : std::string();
  const bool warmup_lr = type == "WarmupLR" || type == "WarmupDecayLR";
  const bool warmup = warmup_lr || type == "WarmupCosineLR";
  const bool total = type == "WarmupDecayLR" || type == "WarmupCosineLR";
  apply(root, "scheduler.params.warmup_min_lr", Json(0), false, "");
  apply(root, "scheduler.params.warmup_max_lr", json_of(o.lr), given(o, "--lr") && warmup_lr,
        "--lr");
  apply(root, "scheduler.params.warmup_num_steps", json_of(o.warmup_steps),
        given(o, "--warmup") && warmup, "--warmup");
  apply(root, "scheduler.params.total_num_steps", json_of(o.total_steps),
        given(o, "--steps") && total, "--steps");
}

void resolve_precision(Json& root, const ConfigOverrides& o) {
  for (const char* section : {"fp16", "bf16"}) {
    std::optional<Json> enabled;
    if (o.dtype) enabled = (*o.dtype == section);
    // An explicit --dtype bf16 turns on a section the file leaves out.
    if (given(o, "--dtype") && enabled == Json(true) && !root.contains(section))
      root[section] = Json::object();
    apply(root, str(section, ".enabled"), enabled, given(o, "--dtype"),
          o.dtype ? str("--dtype ", *o.dtype) : std::string("--dtype"));
  }
  apply(root, "amp.enabled", Json(false), false, "");  // zerotrain has no Apex
}

// A given ZeRO flag (zero_flag_keys) fills its key (creating zero_optimization when the file has
// none) and must agree with the file's value; the HF "auto" rules below then see the stage the
// run will use.
void resolve_zero_flags(Json& root, const ConfigOverrides& o) {
  for (const ZeroKey* k : zero_flag_keys()) {
    const std::optional<int64_t>& value = o.*(k->given);
    if (!given(o, k->flag) || !value) continue;
    if (!root.contains("zero_optimization")) root["zero_optimization"] = Json::object();
    // The stage-3 keys' other spelling (prefetch_bucket_size, ...) when the file uses that one.
    std::string_view key = k->path;
    const std::string_view alias = zero_key_alias(*k);
    const Json& zero = root["zero_optimization"];
    if (!alias.empty() && zero.is_object() && zero.contains(std::string(alias))) key = alias;
    apply(root, str("zero_optimization.", key), Json(*value), true, k->flag);
  }
}

// The offload flags: a given --offload-optimizer / --offload-param fills its section's device
// (creating the section) and must agree with the file's; --nvme-path and --pin-memory then fill
// every section whose device is nvme (or, for pin_memory, not none) and must agree with it. A
// --nvme-path or --pin-memory that no section uses is an error naming the flags that would.
void resolve_offload_flags(Json& root, const ConfigOverrides& o) {
  struct Section {
    const char* key;
    std::string_view flag;
    const std::optional<std::string>& device;
  };
  const Section sections[] = {
      {"offload_optimizer", zero_key("offload_optimizer.device").flag, o.offload_optimizer},
      {"offload_param", zero_key("offload_param.device").flag, o.offload_param}};
  for (const Section& s : sections) {
    if (!given(o, s.flag) || !s.device) continue;
    if (!root.contains("zero_optimization")) root["zero_optimization"] = Json::object();
    Json& zero = root["zero_optimization"];
    if (!zero.is_object()) return;  // the parser names the bad section
    if (!zero.contains(s.key) || zero[s.key].is_null()) zero[s.key] = Json::object();
    apply(root, str("zero_optimization.", s.key, ".device"), Json(*s.device), true,
          str(s.flag, " ", *s.device));
  }
  const auto zero = root.find("zero_optimization");
  auto device_of = [&](const char* key) -> std::string {
    if (zero == root.end() || !zero->is_object()) return "none";
    const auto section = zero->find(key);
    if (section == zero->end() || !section->is_object()) return "none";
    const auto d = section->find("device");
    return d != section->end() && d->is_string() ? d->get<std::string>() : "none";
  };
  struct Target {
    const char* key;
    std::string_view flag;
    std::optional<Json> value;
    bool (*uses)(const std::string& device);
    const char* needs;
  };
  const Target targets[] = {
      {"nvme_path", zero_key("offload_optimizer.nvme_path").flag, json_of(o.nvme_path),
       [](const std::string& d) { return d == "nvme"; },
       "device nvme (--offload-optimizer nvme or --offload-param nvme)"},
      {"pin_memory", zero_key("offload_optimizer.pin_memory").flag, json_of(o.pin_memory),
       [](const std::string& d) { return d == "cpu" || d == "nvme"; },
       "device cpu or nvme (--offload-optimizer or --offload-param)"},
  };
  for (const Target& t : targets) {
    if (!given(o, t.flag) || !t.value) continue;
    bool used = false;
    for (const Section& s : sections) {
      if (!t.uses(device_of(s.key))) continue;
      used = true;
      apply(root, str("zero_optimization.", s.key, ".", t.key), t.value, true, t.flag);
    }
    if (!used)
      fail(str("zero_optimization.offload_optimizer.", t.key),
           str(t.flag,
               " is given but neither zero_optimization.offload_optimizer nor "
               "offload_param has ",
               t.needs));
  }
}

void resolve_zero(Json& root, const ConfigOverrides& o) {
  if (!o.hidden_size) return;
  const int64_t h = *o.hidden_size;
  if (h < 1 || h > (int64_t{1} << 30))
    throw ValueError("config", str("hidden size must be in [1, 2^30], got ", h));
  // The rows zero_key_table.h fills from the hidden size, in its order; the stage-3 ones under
  // both spellings, and only when the file's stage is 3.
  const auto stage_is_3 = [&] {
    const auto zero = root.find("zero_optimization");
    if (zero == root.end() || !zero->is_object()) return false;
    const auto stage = zero->find("stage");
    return stage != zero->end() && stage->is_number() && stage->get<double>() == 3;
  };
  for (const ZeroKey& k : zero_key_table()) {
    if (!k.hidden_auto) continue;
    const Json value(k.hidden_auto(h));
    if (!k.hidden_auto_stage3) {
      apply(root, str(kZero, k.path), value, false, "");
    } else if (stage_is_3()) {
      apply(root, str(kZero, k.path), value, false, "");
      apply(root, str(kZero, zero_key_alias(k)), value, false, "");
    }
  }
}

// The stage-3 keys Hugging Face fills only at stage 3 (both spellings).
bool stage3_only(std::string_view path) {
  const ZeroKey* k = hidden_filled(path);
  return k && k->hidden_auto_stage3;
}

// DeepSpeed's default of the key at `path` as `zerotrain config check` prints it, or "" when the
// printed configuration has no such key.
std::string default_text(std::string_view path) {
  static const Json defaults = [] {
    DsConfig c;
    c.zero_optimization.offload_param.emplace();
    c.zero_optimization.offload_optimizer.emplace();
    return Json::parse(ds_config_json(c));
  }();
  std::string key;
  std::string printed(path);
  for (int spelling = 0; spelling < 2; ++spelling) {
    Json copy = defaults;
    if (const Json* parent = parent_of(copy, printed, key)) {
      const auto it = parent->find(key);
      if (it != parent->end()) return it->dump();
    }
    // The stage-3 keys print under their stage3_ names.
    const size_t dot = printed.rfind('.');
    printed.insert(dot + 1, "stage3_");
  }
  return "";
}

// [Note: auto no trainer fills] DeepSpeed's pydantic sections drop an "auto" value before
// validating (DeepSpeedConfigModel.__init__ in config_utils.py), so the key takes its default.
// An "auto" a trainer fills (auto_hint: the batch sizes, lr, ..., the bucket sizes from the
// hidden size) stays for the parser, which asks for the flag; the others (offload_param's
// buffer_size, stage3_max_live_parameters, stage3_gather_16bit_weights_on_model_save, and the
// stage-3 bucket keys below stage 3, where Hugging Face leaves them) are dropped with a note.
void drop_unfilled_autos(Json& object, const std::string& path, int64_t stage,
                         std::vector<std::string>& warnings) {
  for (auto it = object.begin(); it != object.end();) {
    const std::string key_path = join_path(path, it.key());
    if (it->is_object()) {
      drop_unfilled_autos(*it, key_path, stage, warnings);
      ++it;
      continue;
    }
    const bool filled = !auto_hint(key_path).empty() && (stage == 3 || !stage3_only(key_path));
    if (!is_auto(*it) || filled) {
      ++it;
      continue;
    }
    const std::string def = default_text(key_path);
    warnings.push_back(str("[config] ", key_path, ": \"auto\" that no trainer fills",
                           stage3_only(key_path) ? " below stage 3" : "",
                           "; DeepSpeed drops it for the key's default",
                           def.empty() ? std::string() : str(", ", def)));
    it = object.erase(it);
  }
}

}  // namespace

void resolve_auto(Json& root, const ConfigOverrides& overrides,
                  std::vector<std::string>& warnings) {
  if (overrides.world_size < 1)
    throw ValueError("config", str("world size must be >= 1, got ", overrides.world_size));
  // A section without params takes given flags like one with empty params.
  for (const char* section : {"optimizer", "scheduler"}) {
    const auto it = root.find(section);
    if (it != root.end() && it->is_object() && !it->contains("params"))
      (*it)["params"] = Json::object();
  }
  resolve_batch(root, overrides);
  resolve_optimizer(root, overrides);
  resolve_scheduler(root, overrides);
  resolve_precision(root, overrides);
  resolve_zero_flags(root, overrides);
  resolve_offload_flags(root, overrides);
  resolve_zero(root, overrides);
  const auto zero = root.find("zero_optimization");
  // Only whether it is stage 3 matters here; any other value (a stage the config's validation
  // refuses later, 1e300 included) is read without converting it to an integer.
  int64_t stage = 0;
  if (zero != root.end() && zero->is_object() && zero->contains("stage") &&
      (*zero)["stage"].is_number() && (*zero)["stage"].get<double>() == 3)
    stage = 3;
  for (auto& [key, section] : root.items())
    if (section.is_object() && validated_leniently(key))
      drop_unfilled_autos(section, key, stage, warnings);
}

std::string auto_hint(std::string_view path) {
  if (hidden_filled(path)) return std::string(kHiddenHint);
  for (const Hint& h : kHints)
    if (h.path == path) return std::string(h.hint);
  return "";
}

}  // namespace zt::config
