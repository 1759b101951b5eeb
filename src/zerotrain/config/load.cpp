// load_ds_config / parse_ds_config: the pipeline of load.h and the top-level keys.
#include "zerotrain/config/load.h"

#include "zerotrain/config/batch_rule.h"
#include "zerotrain/config/deprecations.h"
#include "zerotrain/config/key_usage.h"
#include "zerotrain/config/parse_sections.h"
#include "zerotrain/config/resolve_auto.h"
#include "zerotrain/core/error.h"
#include "zerotrain/core/files.h"
#include "zerotrain/core/json_util.h"

namespace zt::config {

namespace {

void read_top_level(Section& top, DsConfig& c) {
  c.gradient_clipping = top.get_double("gradient_clipping", c.gradient_clipping, 0.0);
  c.steps_per_print = top.get_opt_int("steps_per_print", 1);
  c.wall_clock_breakdown = top.get_bool("wall_clock_breakdown", c.wall_clock_breakdown);
  c.memory_breakdown = top.get_bool("memory_breakdown", c.memory_breakdown);
  c.dump_state = top.get_bool("dump_state", c.dump_state);
  c.prescale_gradients = top.get_bool("prescale_gradients", c.prescale_gradients);
  c.gradient_predivide_factor =
      top.get_double("gradient_predivide_factor", c.gradient_predivide_factor, 0.0);
  if (c.gradient_predivide_factor <= 0)
    fail("gradient_predivide_factor", str("must be > 0, got ", c.gradient_predivide_factor));
  c.sparse_gradients = top.get_bool("sparse_gradients", c.sparse_gradients);
  c.zero_allow_untested_optimizer =
      top.get_bool("zero_allow_untested_optimizer", c.zero_allow_untested_optimizer);
  c.zero_force_ds_cpu_optimizer =
      top.get_bool("zero_force_ds_cpu_optimizer", c.zero_force_ds_cpu_optimizer);
  c.disable_allgather = top.get_bool("disable_allgather", c.disable_allgather);
  c.dataloader_drop_last = top.get_bool("dataloader_drop_last", c.dataloader_drop_last);
  c.vocabulary_size = top.get_opt_int("vocabulary_size", 1);
}

void check_offload(std::string_view path, OffloadDevice device,
                   const std::optional<std::string>& nvme_path) {
  if (device == OffloadDevice::nvme && (!nvme_path || nvme_path->empty()))
    fail(path, "device \"nvme\" needs nvme_path (a directory on the NVMe drive)");
}

// [Note: offload at the wrong stage] DeepSpeed 0.19.6 validates neither offload section against
// the stage (zero/offload_config.py, zero/config.py; only a ratio below 1 asserts stage 3). Stages
// 1 and 2 never read offload_param (stage_1_and_2.py), nor stage 0: the section is ignored, so
// zerotrain warns naming the key and the ZeRO section drops it (train/ds_train_config.cpp), while
// `config check` still prints it as DeepSpeed resolves it. offload_optimizer at stage 0 is not
// ignored: DeepSpeed builds its CPU Adam over the parameters on the device and fails at the first
// step ("CPUAdam param is on cuda:0 and must be 'cpu'"), so it stays an error here.
void check_offload_stages(const ZeroConfig& z, std::vector<std::string>& warnings) {
  if (z.offload_param && z.offload_param->device != OffloadDevice::none && z.stage < 3)
    warnings.push_back(str("[config] zero_optimization.offload_param.device ",
                           offload_device_name(z.offload_param->device), ": ignored at ZeRO stage ",
                           z.stage,
                           " (DeepSpeed offloads parameters only at stage 3; --offload-param)"));
  if (z.offload_param && z.stage == 3)
    check_offload("zero_optimization.offload_param", z.offload_param->device,
                  z.offload_param->nvme_path);
  if (z.offload_optimizer) {
    const OffloadOptimizerConfig& o = *z.offload_optimizer;
    if (o.device != OffloadDevice::none && z.stage == 0)
      fail("zero_optimization.offload_optimizer.device",
           str(offload_device_name(o.device),
               " needs ZeRO stage 1, 2 or 3 (zero_optimization.stage is 0; DeepSpeed 0.19.6 fails "
               "at its first step: its CPU Adam finds the parameters on the device); set "
               "--zero-stage or --offload-optimizer none"));
    if (o.ratio < 1.0 && z.stage != 3)
      fail("zero_optimization.offload_optimizer.ratio",
           str("partial offload (ratio ", o.ratio, " < 1) needs ZeRO stage 3 (stage is ", z.stage,
               ")"));
    check_offload("zero_optimization.offload_optimizer", o.device, o.nvme_path);
  }
}

// DeepSpeed 0.19.6 runs ZeRO (stage >= 1) with the optimizers it lists as tested (of zerotrain's:
// Adam, AdamW, Lion) and refuses others unless zero_allow_untested_optimizer is true; it then
// steps FusedLamb over each rank's flat partition, one trust ratio per partition. zerotrain runs
// Lamb and SGD at every stage, Lamb's trust ratio per parameter as at stage 0, and says so.
void check_untested_optimizer(const DsConfig& c, std::vector<std::string>& warnings) {
  if (!c.optimizer || c.zero_optimization.stage == 0) return;
  const OptimizerType t = c.optimizer->type;
  if (t != OptimizerType::lamb && t != OptimizerType::sgd) return;
  const std::string head = str("[config] optimizer.type ", optimizer_type_name(t),
                               " at ZeRO stage ", c.zero_optimization.stage, ": ");
  const std::string lamb = t == OptimizerType::lamb
                               ? " (zerotrain takes Lamb's trust ratio per parameter, as at stage "
                                 "0; DeepSpeed's ZeRO per flat partition)"
                               : "";
  if (!c.zero_allow_untested_optimizer)
    warnings.push_back(str(head,
                           "DeepSpeed 0.19.6 refuses this optimizer under ZeRO unless "
                           "zero_allow_untested_optimizer is true; zerotrain runs it",
                           lamb));
  else if (t == OptimizerType::lamb)
    warnings.push_back(str(head, "zerotrain differs from DeepSpeed", lamb));
}

// Rules that span keys, as DeepSpeed's validators have them.
void check_consistency(const DsConfig& c) {
  const ZeroConfig& z = c.zero_optimization;
  if (c.fp16.fp16_master_weights_and_grads && z.stage == 0)
    fail("fp16.fp16_master_weights_and_grads", "needs ZeRO stage 1, 2 or 3");
  if (c.bf16.bf16_master_weights_and_grads && z.stage == 0)
    fail("bf16.bf16_master_weights_and_grads", "needs ZeRO stage 1, 2 or 3");
  if (c.bf16.bf16_optimizer_states && !c.bf16.bf16_master_weights_and_grads)
    fail("bf16.bf16_optimizer_states", "needs bf16.bf16_master_weights_and_grads");
}

}  // namespace

LoadedConfig parse_ds_config(std::string_view text, const std::string& source,
                             const ConfigOverrides& overrides) {
  LoadedConfig out;
  Json root = parse_json(text, "config", source);
  if (!root.is_object())
    throw ValueError("config", str(source, ": expected a JSON object at the top level, got ",
                                   describe_json(root)));
  apply_deprecations(root, out.warnings);
  resolve_auto(root, overrides, out.warnings);

  DsConfig& c = out.config;
  Section top(root, "", &out.warnings);
  top.refuse_unsupported();
  const std::optional<int64_t> train = top.get_opt_int("train_batch_size");
  const std::optional<int64_t> micro = top.get_opt_int("train_micro_batch_size_per_gpu");
  const std::optional<int64_t> gas = top.get_opt_int("gradient_accumulation_steps");
  read_top_level(top, c);
  if (auto s = top.get_section("zero_optimization")) parse_zero(*s, c.zero_optimization);
  parse_precision(top, c);
  if (auto s = top.get_section("optimizer")) {
    c.optimizer.emplace();
    parse_optimizer(*s, *c.optimizer);
  }
  if (auto s = top.get_section("scheduler")) {
    c.scheduler.emplace();
    parse_scheduler(*s, *c.scheduler);
  }
  parse_misc(top, c);
  top.finish();

  const BatchTriple b = resolve_batch_triple(train, micro, gas, overrides.world_size);
  c.train_batch_size = b.train_batch_size;
  c.train_micro_batch_size_per_gpu = b.micro_batch_per_gpu;
  c.gradient_accumulation_steps = b.gradient_accumulation_steps;
  c.world_size = overrides.world_size;
  check_offload_stages(c.zero_optimization, out.warnings);
  check_untested_optimizer(c, out.warnings);
  check_consistency(c);
  for (std::string& w : unread_setting_warnings(c))
    out.warnings.push_back(std::move(w));
  return out;
}

LoadedConfig load_ds_config(const std::filesystem::path& path, const ConfigOverrides& overrides) {
  return parse_ds_config(read_text_file(path, "config"), path.string(), overrides);
}

}  // namespace zt::config
