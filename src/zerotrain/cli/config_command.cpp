// `zerotrain config check FILE`: loads a DeepSpeed ds_config.json as `zerotrain train --deepspeed`
// would, resolving "auto" from the flags given, and prints the fully resolved configuration as
// JSON on stdout (warnings on stderr), or with --explain how zerotrain uses each key of the file
// (config/key_usage.h). A bad file is one "[config] ..." line and exit 1. With --accelerate-config,
// an Accelerate config file instead: the run it describes and the ds_config it becomes.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "zerotrain/cli/commands.h"
#include "zerotrain/cli/given_flags.h"
#include "zerotrain/config/accelerate_ds_config.h"
#include "zerotrain/config/key_usage.h"
#include "zerotrain/config/load.h"
#include "zerotrain/config/zero_key_table.h"
#include "zerotrain/core/error.h"
#include "zerotrain/core/files.h"
#include "zerotrain/core/json_util.h"

namespace zt::cli {

namespace {

struct CheckArgs {
  std::string file;
  std::string accelerate_config;  // --accelerate-config
  int64_t world_size = 1;
  bool explain = false;
};

template <typename T>
void bind_value(CLI::App* cmd, const std::string& flag, std::optional<T>& target,
                const std::string& help) {
  cmd->add_option_function<T>(
      flag, [&target](const T& v) { target = v; }, help);
}

// `config check FILE`: the resolved ds_config (or --explain's lines).
int check_ds_config(const CheckArgs& a, const config::ConfigOverrides& o) {
  const config::LoadedConfig loaded = config::load_ds_config(a.file, o);
  for (const std::string& w : loaded.warnings)
    std::fprintf(stderr, "%s\n", w.c_str());
  const std::string resolved = config::ds_config_json(loaded.config);
  if (a.explain) {
    const nlohmann::json file = parse_json(read_text_file(a.file, "config"), "config", a.file);
    std::printf("%s", config::explain_config(file, nlohmann::json::parse(resolved)).c_str());
    return 0;
  }
  std::printf("%s\n", resolved.c_str());
  return 0;
}

// `config check --accelerate-config FILE`: the run the file describes (ranks, device, zero.Init)
// and its resolved ds_config, as JSON; --explain explains the ds_config it becomes.
int check_accelerate_config(const CheckArgs& a, config::ConfigOverrides o) {
  const config::AccelerateConfig acc = config::read_accelerate_config(a.accelerate_config);
  const config::AccelerateRanks& r = acc.ranks;
  if (o.given.contains("--world-size") && o.world_size != r.num_processes)
    throw ValueError("config", str("--world-size ", o.world_size, " but ", acc.source,
                                   " has num_processes ", r.num_processes, "; make them agree"));
  o.world_size = r.num_processes;
  const std::optional<std::string> dtype = o.given.contains("--dtype") ? o.dtype : std::nullopt;
  const config::AccelerateRun run = config::accelerate_ds_config(acc, dtype);
  for (const auto* lines : {&acc.warnings, &run.warnings})
    for (const std::string& w : *lines)
      std::fprintf(stderr, "%s\n", w.c_str());
  const config::LoadedConfig loaded =
      config::parse_ds_config(run.ds_config.dump(), run.ds_source, o);
  for (const std::string& w : loaded.warnings)
    std::fprintf(stderr, "%s\n", w.c_str());
  const nlohmann::json resolved = nlohmann::json::parse(config::ds_config_json(loaded.config));
  if (a.explain) {
    std::printf("%s", config::explain_config(run.ds_config, resolved).c_str());
    return 0;
  }
  nlohmann::ordered_json out;
  out["distributed_type"] = config::backend_name(acc.backend);
  out["mixed_precision"] = config::mixed_precision_name(acc.mixed_precision);
  out["device"] = acc.use_cpu ? "cpu" : "cuda (one GPU per rank), or cpu where none";
  out["num_processes"] = r.num_processes;
  out["num_machines"] = r.num_machines;
  out["machine_rank"] = r.machine_rank;
  out["main_process"] =
      r.num_machines > 1
          ? str(*r.main_process_ip, ":", *r.main_process_port)
          : str("127.0.0.1:", r.main_process_port ? std::to_string(*r.main_process_port)
                                                  : std::string("a free port"));
  if (acc.backend == config::AccelerateBackend::fsdp)
    out["fsdp_sharding_strategy"] = config::sharding_name(acc.fsdp.sharding);
  out["zero_init"] = run.zero_init;
  out["ds_config_source"] = run.ds_source;
  out["ds_config"] = resolved;
  std::printf("%s\n", out.dump(2).c_str());
  return 0;
}

}  // namespace

void add_config_command(CLI::App& app, std::function<int()>& action) {
  auto* config = app.add_subcommand("config", "Check DeepSpeed configuration files");
  config->require_subcommand(1);
  config->footer(
      "Run `zerotrain config check --help` for its options.\n\n"
      "Example:\n"
      "  zerotrain config check ds_config.json --world-size 8");
  auto* check = config->add_subcommand(
      "check", "Resolve a ds_config.json and print every key with its value (as JSON)");
  auto a = std::make_shared<CheckArgs>();
  auto o = std::make_shared<config::ConfigOverrides>();
  check->add_option("FILE", a->file, "DeepSpeed configuration (ds_config.json)");
  check
      ->add_option("--accelerate-config", a->accelerate_config,
                   "instead of FILE, an Accelerate config file (YAML): prints the run it "
                   "describes (ranks, device, zero.Init) and the ds_config it trains with, "
                   "resolved as `zerotrain train --accelerate-config` resolves it (--world-size is "
                   "its num_processes)")
      ->check(CLI::ExistingFile);
  check->add_flag("--explain", a->explain,
                  "instead of the JSON, one line per key of the file: its value (what an \"auto\" "
                  "resolved to) and how zerotrain uses it");
  check->add_option("--world-size", o->world_size, "data-parallel ranks (for the batch rule)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  check->add_option_function<int64_t>(
      "--hidden-size", [o](const int64_t& h) { o->hidden_size = h; },
      "the model's hidden size: resolves \"auto\" ZeRO bucket sizes");
  bind_value(check, "--micro-batch", o->micro_batch, "train_micro_batch_size_per_gpu for \"auto\"");
  bind_value(check, "--grad-accum", o->grad_accum, "gradient_accumulation_steps for \"auto\"");
  bind_value(check, "--steps", o->total_steps, "scheduler total_num_steps for \"auto\"");
  bind_value(check, "--warmup", o->warmup_steps, "scheduler warmup_num_steps for \"auto\"");
  bind_value(check, "--lr", o->lr, "optimizer lr and scheduler warmup_max_lr for \"auto\"");
  bind_value(check, "--beta1", o->beta1, "optimizer betas[0] for \"auto\" (with --beta2)");
  bind_value(check, "--beta2", o->beta2, "optimizer betas[1] for \"auto\" (with --beta1)");
  bind_value(check, "--eps", o->eps, "optimizer eps for \"auto\"");
  bind_value(check, "--weight-decay", o->weight_decay, "optimizer weight_decay for \"auto\"");
  bind_value(check, "--clip", o->clip, "gradient_clipping for \"auto\"");
  // train's ZeRO flags that config check takes too (config/zero_key_table.h).
  for (const config::ZeroKey* k : config::zero_flag_keys())
    if (k->config_check_flag)
      bind_value(check, std::string(k->flag), (*o).*(k->given),
                 str("zero_optimization.", k->path, " (as zerotrain train's flag)"));
  check
      ->add_option_function<std::string>(
          "--dtype", [o](const std::string& d) { o->dtype = d; },
          "f32, bf16 or fp16: fp16.enabled / bf16.enabled for \"auto\"")
      ->check(CLI::IsMember({"f32", "bf16", "fp16"}));
  check->footer(
      "A flag fills an \"auto\" and a key the file leaves out, and must agree with a value the "
      "file sets.\n"
      "Examples:\n"
      "  zerotrain config check ds_config.json\n"
      "  zerotrain config check ds_config.json --explain\n"
      "  zerotrain config check --accelerate-config default_config.yaml --micro-batch 4\n"
      "  zerotrain config check ds_config_zero3.json --world-size 8 --hidden-size 4096 \\\n"
      "      --micro-batch 4 --grad-accum 2 --lr 2e-5 --beta1 0.9 --beta2 0.999 --eps 1e-8 \\\n"
      "      --weight-decay 0 --warmup 100 --steps 1000 --clip 1.0 --dtype bf16");
  check->callback([&action, a, o, check] {
    o->given = given_flags(*check);
    if (a->file.empty() == a->accelerate_config.empty())
      throw CLI::ValidationError("config check", "give one of FILE and --accelerate-config FILE");
    action = [a, o] {
      return a->accelerate_config.empty() ? check_ds_config(*a, *o)
                                          : check_accelerate_config(*a, *o);
    };
  });
}

}  // namespace zt::cli
