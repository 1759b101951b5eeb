// `zerotrain config check FILE`: loads a DeepSpeed ds_config.json as `zerotrain train --deepspeed`
// would, resolving "auto" from the flags given, and prints the fully resolved configuration as
// JSON on stdout (warnings on stderr), or with --explain how zerotrain uses each key of the file
// (config/key_usage.h). A bad file is one "[config] ..." line and exit 1.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "zerotrain/cli/commands.h"
#include "zerotrain/cli/given_flags.h"
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
  int64_t world_size = 1;
  bool explain = false;
};

template <typename T>
void bind_value(CLI::App* cmd, const std::string& flag, std::optional<T>& target,
                const std::string& help) {
  cmd->add_option_function<T>(
      flag, [&target](const T& v) { target = v; }, help);
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
  check->add_option("FILE", a->file, "DeepSpeed configuration (ds_config.json)")->required();
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
      "  zerotrain config check ds_config_zero3.json --world-size 8 --hidden-size 4096 \\\n"
      "      --micro-batch 4 --grad-accum 2 --lr 2e-5 --beta1 0.9 --beta2 0.999 --eps 1e-8 \\\n"
      "      --weight-decay 0 --warmup 100 --steps 1000 --clip 1.0 --dtype bf16");
  check->callback([&action, a, o, check] {
    o->given = given_flags(*check);
    action = [a, o] {
      const config::LoadedConfig loaded = config::load_ds_config(a->file, *o);
      for (const std::string& w : loaded.warnings)
        std::fprintf(stderr, "%s\n", w.c_str());
      const std::string resolved = config::ds_config_json(loaded.config);
      if (a->explain) {
        const nlohmann::json file =
            parse_json(read_text_file(a->file, "config"), "config", a->file);
        std::printf("%s", config::explain_config(file, nlohmann::json::parse(resolved)).c_str());
        return 0;
      }
      std::printf("%s\n", resolved.c_str());
      return 0;
    };
  });
}

}  // namespace zt::cli
