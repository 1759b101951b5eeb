// Reading an Accelerate config file (accelerate_config.h) with yaml-cpp. The keys and what
// Accelerate does with them follow accelerate's ClusterConfig (commands/config/config_args.py),
// DeepSpeedPlugin and FullyShardedDataParallelPlugin (utils/dataclasses.py).
#include "zerotrain/config/accelerate_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <list>

#include "zerotrain/config/nearest_name.h"
#include "zerotrain/core/error.h"
#include "zerotrain/core/files.h"
#include "zerotrain/core/json_util.h"

namespace zt::config {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// What a node holds, for errors.
std::string describe(const YAML::Node& n) {
  if (n.IsNull()) return "null";
  if (n.IsMap()) return "a map";
  if (n.IsSequence()) return "a list";
  return quote_excerpt(n.Scalar());
}

// A YAML mapping whose keys are taken one by one; what is left over is reported by the caller.
// Errors name the key with its section ("fsdp_config.fsdp_offload_params").
class YamlMap {
 public:
  YamlMap(const YAML::Node& node, std::string source, std::string section)
      : source_(std::move(source)), section_(std::move(section)) {
    if (node.IsNull()) return;  // "fsdp_config:" with nothing: an empty section
    if (!node.IsMap())
      fail(section_.empty() ? "top level" : section_, str("expected a map, got ", describe(node)));
    for (const auto& kv : node) {
      if (!kv.first.IsScalar()) fail(section_, "a key that is not a name");
      const std::string key = kv.first.Scalar();
      if (!std::all_of(key.begin(), key.end(),
                       [](unsigned char ch) { return ch >= 32 && ch < 127; }))
        fail(section_.empty() ? "top level" : section_,
             str("a key that is not a name: ", quote_excerpt(key)));
      if (std::any_of(entries_.begin(), entries_.end(),
                      [&](const auto& e) { return e.first == key; }))
        fail(path(key), "repeated key (give it once)");
      entries_.emplace_back(key, kv.second);
    }
  }

  [[noreturn]] void fail(std::string_view key, const std::string& what) const {
    throw ValueError("accelerate", str(source_, ": ", key, ": ", what));
  }
  std::string path(std::string_view key) const {
    return section_.empty() ? std::string(key) : str(section_, ".", key);
  }

  // The key's node, or an empty optional when the key is absent; the key counts as read.
  std::optional<YAML::Node> take(std::string_view key) {
    for (auto it = entries_.begin(); it != entries_.end(); ++it)
      if (it->first == key) {
        YAML::Node n = it->second;
        entries_.erase(it);
        return n;
      }
    return std::nullopt;
  }
  // A scalar's text; absent or null: nullopt.
  std::optional<std::string> text(std::string_view key) {
    const std::optional<YAML::Node> n = take(key);
    if (!n || n->IsNull()) return std::nullopt;
    if (!n->IsScalar()) fail(path(key), str("expected a value, got ", describe(*n)));
    return n->Scalar();
  }
  std::optional<int64_t> integer(std::string_view key) {
    const std::optional<std::string> t = text(key);
    if (!t) return std::nullopt;
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(t->data(), t->data() + t->size(), v);
    if (ec != std::errc() || end != t->data() + t->size())
      fail(path(key), str("expected an integer, got ", quote_excerpt(*t)));
    return v;
  }
  std::optional<double> number(std::string_view key) {
    const std::optional<std::string> t = text(key);
    if (!t) return std::nullopt;
    double v = 0;
    const auto [end, ec] = std::from_chars(t->data(), t->data() + t->size(), v);
    if (ec != std::errc() || end != t->data() + t->size())
      fail(path(key), str("expected a number, got ", quote_excerpt(*t)));
    return v;
  }
  // YAML 1.1's spellings, as PyYAML (Accelerate's reader) takes them.
  std::optional<bool> boolean(std::string_view key) {
    const std::optional<std::string> t = text(key);
    if (!t) return std::nullopt;
    const std::string v = lower(*t);
    if (v == "true" || v == "yes" || v == "on") return true;
    if (v == "false" || v == "no" || v == "off") return false;
    fail(path(key), str("expected true or false, got ", quote_excerpt(*t)));
  }
  // One of `choices` (compared ignoring case); returns the choice's spelling.
  std::optional<std::string> choice(std::string_view key, const std::vector<std::string>& choices) {
    const std::optional<std::string> t = text(key);
    if (!t) return std::nullopt;
    for (const std::string& c : choices)
      if (lower(c) == lower(*t)) return c;
    std::string list;
    for (const std::string& c : choices)
      list += (list.empty() ? "" : ", ") + c;
    fail(path(key), str("expected one of ", list, ", got ", quote_excerpt(*t)));
  }
  // A nested section; absent or null: an empty one.
  YamlMap section(std::string_view key) {
    const std::optional<YAML::Node> n = take(key);
    return YamlMap(n ? *n : YAML::Node(), source_, path(key));
  }

  // Renames the keys that do not contain `mark` to `prefix` + key (a clash is a repeated key).
  void prefix_keys(std::string_view mark, std::string_view prefix) {
    std::list<std::pair<std::string, YAML::Node>> renamed;
    for (auto& [key, node] : entries_) {
      std::string k = key.find(mark) == std::string::npos ? str(prefix, key) : key;
      if (std::any_of(renamed.begin(), renamed.end(), [&](const auto& e) { return e.first == k; }))
        fail(path(k), "repeated key (given with and without its prefix)");
      renamed.emplace_back(std::move(k), node);
    }
    entries_ = std::move(renamed);
  }

  bool empty() const { return entries_.empty(); }
  std::vector<std::string> keys() const {
    std::vector<std::string> k;
    for (const auto& e : entries_)
      k.push_back(e.first);
    return k;
  }
  // Whether the key's value asks for nothing: absent, null, false, "no", an empty map or list.
  bool inert(std::string_view key) {
    const std::optional<YAML::Node> n = take(key);
    if (!n || n->IsNull()) return true;
    if (n->IsMap() || n->IsSequence()) return n->size() == 0;
    const std::string v = lower(n->Scalar());
    return v == "false" || v == "no" || v.empty();
  }
  const std::string& source() const { return source_; }

 private:
  std::string source_, section_;
  // A list: a yaml-cpp Node's assignment writes through to the tree it refers to, so entries are
  // never assigned, only constructed and unlinked.
  std::list<std::pair<std::string, YAML::Node>> entries_;
};

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v)
    s += (s.empty() ? "" : ", ") + x;
  return s;
}

// Accelerate's ClusterConfig fields that change nothing here (TPU, notebooks, compilers, other
// launchers); one warning names those whose value asks for something.
const std::vector<std::string> kUnusedTopKeys = {"debug",
                                                 "downcast_bf16",
                                                 "enable_cpu_affinity",
                                                 "tpu_name",
                                                 "tpu_zone",
                                                 "tpu_use_cluster",
                                                 "tpu_use_sudo",
                                                 "command_file",
                                                 "commands",
                                                 "tpu_vm",
                                                 "tpu_env",
                                                 "dynamo_config",
                                                 "dynamo_backend",
                                                 "fp8_config",
                                                 "tp_config",
                                                 "megatron_lm_config",
                                                 "ipex_config",
                                                 "mpirun_config"};
// Fields whose every value is fine: a static rendezvous is the only one, the others are for
// notebooks and network layouts the launcher does not need to know.
const std::vector<std::string> kInertTopKeys = {"main_training_function", "same_network"};
const std::vector<std::string> kUsedTopKeys = {"compute_environment", "distributed_type",
                                               "mixed_precision",     "use_cpu",
                                               "num_processes",       "num_machines",
                                               "machine_rank",        "main_process_ip",
                                               "main_process_port",   "gpu_ids",
                                               "rdzv_backend",        "deepspeed_config",
                                               "fsdp_config",         "fp16"};

AccelerateBackend read_backend(YamlMap& top) {
  const std::optional<std::string> t = top.text("distributed_type");
  if (!t) top.fail("distributed_type", "missing (Accelerate requires it too)");
  const std::string v = *t;
  if (v == "NO") return AccelerateBackend::none;
  if (v == "MULTI_CPU") return AccelerateBackend::multi_cpu;
  if (v == "MULTI_GPU") return AccelerateBackend::multi_gpu;
  if (v == "DEEPSPEED") return AccelerateBackend::deepspeed;
  if (v == "FSDP") return AccelerateBackend::fsdp;
  top.fail("distributed_type",
           str(quote_excerpt(v),
               " is not run by zerotrain (NO, MULTI_CPU, MULTI_GPU, DEEPSPEED and FSDP "
               "are)"));
}

MixedPrecision read_mixed_precision(YamlMap& top) {
  const bool legacy_fp16 = top.boolean("fp16").value_or(false);  // Accelerate's old spelling
  const std::optional<std::string> t = top.text("mixed_precision");
  if (!t) return legacy_fp16 ? MixedPrecision::fp16 : MixedPrecision::no;
  const std::string v = lower(*t);
  if (v == "no" || v == "false") return MixedPrecision::no;
  if (v == "fp16") return MixedPrecision::fp16;
  if (v == "bf16") return MixedPrecision::bf16;
  if (v == "fp8") top.fail("mixed_precision", "fp8 is not run by zerotrain (use bf16)");
  top.fail("mixed_precision", str("expected no, fp16 or bf16, got ", quote_excerpt(*t)));
}

void read_ranks(YamlMap& top, AccelerateBackend backend, AccelerateRanks& r) {
  const std::optional<int64_t> n = top.integer("num_processes");
  if (n && *n != -1 && *n < 1) top.fail("num_processes", str("must be at least 1, got ", *n));
  if (!n || *n == -1) {
    if (backend != AccelerateBackend::none)
      top.fail("num_processes", "not set (zerotrain does not count the devices for you: give it)");
  } else {
    r.num_processes = *n;
  }
  r.num_machines = top.integer("num_machines").value_or(1);
  r.machine_rank = top.integer("machine_rank").value_or(0);
  if (r.num_machines < 1) top.fail("num_machines", str("must be at least 1, got ", r.num_machines));
  if (r.num_processes % r.num_machines != 0)
    top.fail("num_processes",
             str(r.num_processes, " does not split evenly over num_machines ", r.num_machines));
  if (r.machine_rank < 0 || r.machine_rank >= r.num_machines)
    top.fail("machine_rank",
             str(r.machine_rank, " is not between 0 and num_machines - 1 = ", r.num_machines - 1));
  r.main_process_ip = top.text("main_process_ip");
  r.main_process_port = top.integer("main_process_port");
  if (r.main_process_port && (*r.main_process_port < 1 || *r.main_process_port > 65535))
    top.fail("main_process_port", str(*r.main_process_port, " is not a port (1-65535)"));
  if (r.num_machines > 1 && (!r.main_process_ip || !r.main_process_port))
    top.fail(r.main_process_ip ? "main_process_port" : "main_process_ip",
             "needed with num_machines > 1 (where rank 0 listens)");
  r.gpu_ids = top.text("gpu_ids");
}

std::string offload_device(YamlMap& s, std::string_view key) {
  return s.choice(key, {"none", "cpu", "nvme"}).value_or("none");
}

// Accelerate refuses the plugin's keys beside a deepspeed_config_file ("the following accelerate
// config variables will be ignored"); zero3_init_flag is the one it reads from the YAML then.
void check_config_file_rule(const YamlMap& s, const DeepSpeedPlugin& d) {
  std::vector<std::string> others;
  for (const std::string& k : d.plugin_keys)
    if (k != "zero3_init_flag") others.push_back(k);
  if (d.config_file && !others.empty())
    s.fail(str("deepspeed_config.", others.front()),
           str("set beside deepspeed_config_file, whose JSON governs (Accelerate refuses this "
               "too): set it in the JSON file, or remove ",
               join(others)));
}

void read_deepspeed(YamlMap s, const std::filesystem::path& base_dir, DeepSpeedPlugin& d,
                    std::vector<std::string>& unused) {
  static const std::vector<std::string> plugin = {
      "gradient_accumulation_steps", "gradient_clipping",    "zero_stage",
      "offload_optimizer_device",    "offload_param_device", "offload_optimizer_nvme_path",
      "offload_param_nvme_path",     "zero3_init_flag",      "zero3_save_16bit_model"};
  for (const std::string& k : s.keys())
    if (std::find(plugin.begin(), plugin.end(), k) != plugin.end()) d.plugin_keys.push_back(k);
  if (const std::optional<std::string> f = s.text("deepspeed_config_file")) {
    const std::filesystem::path p(*f);
    d.config_file = p.is_absolute() ? p : base_dir / p;
  }
  d.gradient_accumulation_steps = s.integer("gradient_accumulation_steps");
  if (d.gradient_accumulation_steps && *d.gradient_accumulation_steps < 1)
    s.fail(s.path("gradient_accumulation_steps"), "must be at least 1");
  d.gradient_clipping = s.number("gradient_clipping");
  if (d.gradient_clipping && *d.gradient_clipping < 0)
    s.fail(s.path("gradient_clipping"), "must not be negative");
  d.zero_stage = s.integer("zero_stage").value_or(2);
  if (d.zero_stage < 0 || d.zero_stage > 3)
    s.fail(s.path("zero_stage"), str("expected 0, 1, 2 or 3, got ", d.zero_stage));
  d.offload_optimizer_device = offload_device(s, "offload_optimizer_device");
  d.offload_param_device = offload_device(s, "offload_param_device");
  d.offload_optimizer_nvme_path = s.text("offload_optimizer_nvme_path");
  d.offload_param_nvme_path = s.text("offload_param_nvme_path");
  d.zero3_init_flag = s.boolean("zero3_init_flag");
  d.zero3_save_16bit_model = s.boolean("zero3_save_16bit_model").value_or(false);
  check_config_file_rule(s, d);
  // DeepSpeed's own multi-node launcher: zerotrain launch runs on each machine instead.
  for (const char* k :
       {"deepspeed_hostfile", "deepspeed_exclusion_filter", "deepspeed_inclusion_filter",
        "deepspeed_multinode_launcher", "deepspeed_moe_layer_cls_names"})
    if (!s.inert(k)) unused.push_back(s.path(k));
  for (const std::string& k : s.keys())
    unused.push_back(s.path(k));  // Accelerate passes unknown plugin keys on unread
}

// fsdp_sharding_strategy or (FSDP 2's spelling) fsdp_reshard_after_forward: a name, its number
// 1-5, or for the latter true (FULL_SHARD) / false (SHARD_GRAD_OP).
std::optional<FsdpSharding> read_sharding(YamlMap& s, std::string_view key) {
  const std::optional<std::string> t = s.text(key);
  if (!t) return std::nullopt;
  static const std::vector<std::pair<std::string, FsdpSharding>> names = {
      {"FULL_SHARD", FsdpSharding::full_shard},
      {"SHARD_GRAD_OP", FsdpSharding::shard_grad_op},
      {"NO_SHARD", FsdpSharding::no_shard},
      {"HYBRID_SHARD", FsdpSharding::hybrid_shard},
      {"HYBRID_SHARD_ZERO2", FsdpSharding::hybrid_shard_zero2}};
  const std::string v = lower(*t);
  for (size_t i = 0; i < names.size(); ++i)
    if (lower(names[i].first) == v || std::to_string(i + 1) == v) return names[i].second;
  if (key == "fsdp_reshard_after_forward" && (v == "true" || v == "false"))
    return v == "true" ? FsdpSharding::full_shard : FsdpSharding::shard_grad_op;
  s.fail(s.path(key), str("expected FULL_SHARD, SHARD_GRAD_OP, NO_SHARD, HYBRID_SHARD or "
                          "HYBRID_SHARD_ZERO2 (or 1-5), got ",
                          quote_excerpt(*t)));
}

void read_fsdp(YamlMap s, FsdpPlugin& f, std::vector<std::string>& warnings,
               std::vector<std::string>& unused) {
  const std::optional<int64_t> version = s.integer("fsdp_version");
  if (version && *version != 1 && *version != 2)
    s.fail(s.path("fsdp_version"), str("expected 1 or 2, got ", *version));
  const std::optional<FsdpSharding> strategy = read_sharding(s, "fsdp_sharding_strategy");
  const std::optional<FsdpSharding> reshard = read_sharding(s, "fsdp_reshard_after_forward");
  if (strategy && reshard && *strategy != *reshard)
    s.fail(s.path("fsdp_reshard_after_forward"),
           str(sharding_name(*reshard), " but fsdp_sharding_strategy is ", sharding_name(*strategy),
               "; give one"));
  f.sharding = strategy.value_or(reshard.value_or(FsdpSharding::full_shard));
  f.offload_params = s.boolean("fsdp_offload_params").value_or(false);
  f.activation_checkpointing = s.boolean("fsdp_activation_checkpointing").value_or(false);
  f.state_dict_type = s.choice("fsdp_state_dict_type",
                               {"FULL_STATE_DICT", "SHARDED_STATE_DICT", "LOCAL_STATE_DICT"})
                          .value_or("FULL_STATE_DICT");
  f.cpu_ram_efficient_loading = s.boolean("fsdp_cpu_ram_efficient_loading").value_or(true);
  f.sync_module_states = s.boolean("fsdp_sync_module_states").value_or(true);
  // What FSDP wraps and prefetches: zerotrain gathers, frees and prefetches one layer at a time.
  std::vector<std::string> implied;
  for (const char* k :
       {"fsdp_auto_wrap_policy", "fsdp_transformer_layer_cls_to_wrap", "fsdp_min_num_params",
        "fsdp_backward_prefetch", "fsdp_backward_prefetch_policy", "fsdp_forward_prefetch",
        "fsdp_use_orig_params"})
    if (s.take(k)) implied.push_back(k);
  if (!implied.empty())
    warnings.push_back(str("[accelerate] ", s.source(), ": fsdp_config: ", join(implied),
                           ": implied (zerotrain gathers, frees and prefetches the parameters one "
                           "transformer layer at a time)"));
  for (const std::string& k : s.keys())
    unused.push_back(s.path(k));
}

// Accelerate's fields that do nothing here, when they ask for something.
void unused_top_keys(YamlMap& top, std::vector<std::string>& unused) {
  for (const std::string& k : kInertTopKeys)
    top.take(k);
  for (const std::string& k : kUnusedTopKeys)
    if (!top.inert(k)) unused.push_back(k);
}

void refuse_unknown_top_keys(const YamlMap& top) {
  if (top.empty()) return;
  const std::string key = top.keys().front();
  std::vector<std::string> known = kUsedTopKeys;
  known.insert(known.end(), kUnusedTopKeys.begin(), kUnusedTopKeys.end());
  known.insert(known.end(), kInertTopKeys.begin(), kInertTopKeys.end());
  const std::optional<std::string> near = nearest_name(key, known);
  top.fail(key, str("unknown key (Accelerate refuses it too)",
                    near ? str("; did you mean ", *near, "?") : std::string()));
}

}  // namespace

AccelerateConfig parse_accelerate_config(std::string_view text, const std::string& source,
                                         const std::filesystem::path& base_dir) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    throw ValueError("accelerate", str(source, ": not YAML: line ", e.mark.line + 1, ", column ",
                                       e.mark.column + 1, ": ", e.msg));
  }
  if (!root.IsMap())
    throw ValueError("accelerate",
                     str(source, ": expected a YAML map of settings, got ", describe(root)));
  AccelerateConfig c;
  c.source = source;
  YamlMap top(root, source, "");
  const std::string env = top.text("compute_environment").value_or("LOCAL_MACHINE");
  if (env != "LOCAL_MACHINE")
    top.fail("compute_environment",
             str(quote_excerpt(env), " is not run by zerotrain (LOCAL_MACHINE is)"));
  c.backend = read_backend(top);
  c.mixed_precision = read_mixed_precision(top);
  c.use_cpu = top.boolean("use_cpu").value_or(false) || c.backend == AccelerateBackend::multi_cpu;
  read_ranks(top, c.backend, c.ranks);
  std::vector<std::string> unused;  // named in one warning line
  // The only rendezvous is static: rank 0 at main_process_ip.
  if (top.text("rdzv_backend").value_or("static") != "static") unused.push_back("rdzv_backend");
  YamlMap ds = top.section("deepspeed_config");
  YamlMap fsdp = top.section("fsdp_config");
  fsdp.prefix_keys("fsdp", "fsdp_");  // Accelerate reads "sharding_strategy" as "fsdp_..." too
  if (c.backend == AccelerateBackend::deepspeed) read_deepspeed(ds, base_dir, c.deepspeed, unused);
  if (c.backend == AccelerateBackend::fsdp) read_fsdp(fsdp, c.fsdp, c.warnings, unused);
  // The other type's section, as in Accelerate, is read by nobody.
  const std::string other = str(" (with distributed_type ", backend_name(c.backend), ")");
  if (c.backend != AccelerateBackend::deepspeed && !ds.empty())
    unused.push_back("deepspeed_config" + other);
  if (c.backend != AccelerateBackend::fsdp && !fsdp.empty())
    unused.push_back("fsdp_config" + other);
  unused_top_keys(top, unused);
  refuse_unknown_top_keys(top);
  if (!unused.empty())
    c.warnings.push_back(
        str("[accelerate] ", source, ": not used by zerotrain (ignored): ", join(unused)));
  return c;
}

AccelerateConfig read_accelerate_config(const std::filesystem::path& file) {
  return parse_accelerate_config(read_text_file(file, "accelerate"), file.string(),
                                 file.parent_path());
}

std::string_view backend_name(AccelerateBackend b) {
  switch (b) {
    case AccelerateBackend::none:
      return "NO";
    case AccelerateBackend::multi_cpu:
      return "MULTI_CPU";
    case AccelerateBackend::multi_gpu:
      return "MULTI_GPU";
    case AccelerateBackend::deepspeed:
      return "DEEPSPEED";
    case AccelerateBackend::fsdp:
      return "FSDP";
  }
  return "?";
}

std::string_view mixed_precision_name(MixedPrecision m) {
  switch (m) {
    case MixedPrecision::no:
      return "no";
    case MixedPrecision::fp16:
      return "fp16";
    case MixedPrecision::bf16:
      return "bf16";
  }
  return "?";
}

std::string_view sharding_name(FsdpSharding s) {
  switch (s) {
    case FsdpSharding::full_shard:
      return "FULL_SHARD";
    case FsdpSharding::shard_grad_op:
      return "SHARD_GRAD_OP";
    case FsdpSharding::no_shard:
      return "NO_SHARD";
    case FsdpSharding::hybrid_shard:
      return "HYBRID_SHARD";
    case FsdpSharding::hybrid_shard_zero2:
      return "HYBRID_SHARD_ZERO2";
  }
  return "?";
}

}  // namespace zt::config
