// accelerate_ds_config (accelerate_ds_config.h): one function per distributed type, then the
// mixed precision.
#include "zerotrain/config/accelerate_ds_config.h"

#include <algorithm>
#include <cctype>

#include "zerotrain/core/error.h"
#include "zerotrain/core/files.h"
#include "zerotrain/core/json_util.h"

namespace zt::config {

namespace {

using Json = nlohmann::json;

[[noreturn]] void fail(const AccelerateConfig& a, std::string_view key, const std::string& what) {
  throw ValueError("accelerate", str(a.source, ": ", key, ": ", what));
}

// The keys of every config the training script's arguments fill ("auto" for the flags).
Json auto_batch_config() {
  return Json{{"train_batch_size", "auto"}, {"train_micro_batch_size_per_gpu", "auto"}};
}

Json offload_section(const std::string& device, const std::optional<std::string>& nvme_path) {
  Json s{{"device", device}};
  if (device == "nvme" && nvme_path) s["nvme_path"] = *nvme_path;
  return s;
}

// DeepSpeedPlugin without a config file: the dict its __post_init__ builds.
Json deepspeed_plugin_config(const DeepSpeedPlugin& d) {
  Json c = auto_batch_config();
  c["gradient_accumulation_steps"] =
      d.gradient_accumulation_steps ? Json(*d.gradient_accumulation_steps) : Json("auto");
  Json z{{"stage", d.zero_stage},
         {"offload_optimizer",
          offload_section(d.offload_optimizer_device, d.offload_optimizer_nvme_path)},
         {"offload_param", offload_section(d.offload_param_device, d.offload_param_nvme_path)}};
  if (d.zero_stage == 3 || d.zero3_save_16bit_model)
    z["stage3_gather_16bit_weights_on_model_save"] = d.zero3_save_16bit_model;
  c["zero_optimization"] = z;
  if (d.gradient_clipping && *d.gradient_clipping != 0)
    c["gradient_clipping"] = *d.gradient_clipping;
  return c;
}

// DeepSpeedPlugin with deepspeed_config_file: the file, as HfDeepSpeedConfig reads it.
Json deepspeed_file_config(const AccelerateConfig& a, const std::filesystem::path& file) {
  Json c = parse_json(read_text_file(file, "accelerate"), "accelerate", file.string());
  if (!c.is_object())
    fail(a, "deepspeed_config.deepspeed_config_file",
         str(file.string(), " holds ", describe_json(c), ", not a DeepSpeed config object"));
  if (!c.contains("zero_optimization"))
    fail(a, "deepspeed_config.deepspeed_config_file",
         str(file.string(), " has no zero_optimization section (Accelerate requires one)"));
  if (!c.contains("gradient_accumulation_steps")) c["gradient_accumulation_steps"] = 1;
  return c;
}

int64_t file_stage(const Json& c) {
  const Json& z = c["zero_optimization"];
  return z.is_object() && z.contains("stage") && z["stage"].is_number_integer()
             ? z["stage"].get<int64_t>()
             : 0;
}

void deepspeed_run(const AccelerateConfig& a, AccelerateRun& run) {
  const DeepSpeedPlugin& d = a.deepspeed;
  run.ds_config =
      d.config_file ? deepspeed_file_config(a, *d.config_file) : deepspeed_plugin_config(d);
  run.ds_source = d.config_file ? d.config_file->string() : a.source;
  const bool stage3 = (d.config_file ? file_stage(run.ds_config) : d.zero_stage) == 3;
  if (d.zero3_init_flag && *d.zero3_init_flag && !stage3)
    run.warnings.push_back(str("[accelerate] ", a.source,
                               ": deepspeed_config.zero3_init_flag: applies at ZeRO stage 3 "
                               "only (ignored)"));
  run.zero_init = d.zero3_init_flag.value_or(true);
}

int64_t fsdp_stage(FsdpSharding s) {
  switch (s) {
    case FsdpSharding::full_shard:
    case FsdpSharding::hybrid_shard:
      return 3;
    case FsdpSharding::shard_grad_op:
    case FsdpSharding::hybrid_shard_zero2:
      return 2;
    case FsdpSharding::no_shard:
      return 0;
  }
  return 3;
}

void fsdp_run(const AccelerateConfig& a, AccelerateRun& run) {
  const FsdpPlugin& f = a.fsdp;
  const int64_t stage = fsdp_stage(f.sharding);
  Json c = auto_batch_config();
  c["gradient_accumulation_steps"] = "auto";
  c["gradient_clipping"] = "auto";
  Json z{{"stage", stage}};
  const bool hybrid =
      f.sharding == FsdpSharding::hybrid_shard || f.sharding == FsdpSharding::hybrid_shard_zero2;
  if (hybrid && a.ranks.num_machines > 1)
    z["zero_hpz_partition_size"] = a.ranks.processes_per_machine();
  if (f.offload_params) {
    if (stage == 0)
      fail(a, "fsdp_config.fsdp_offload_params",
           "with NO_SHARD: zerotrain offloads sharded state only (use SHARD_GRAD_OP or "
           "FULL_SHARD)");
    z["offload_optimizer"] = Json{{"device", "cpu"}};
    if (stage == 3)
      z["offload_param"] = Json{{"device", "cpu"}};
    else
      run.warnings.push_back(str("[accelerate] ", a.source,
                                 ": fsdp_config.fsdp_offload_params "
                                 "with ",
                                 sharding_name(f.sharding),
                                 ": the optimizer state and "
                                 "step go to the CPU; the parameters stay on the device (ZeRO "
                                 "offloads them at stage 3 only)"));
  }
  if (f.state_dict_type == "FULL_STATE_DICT") z["stage3_gather_16bit_weights_on_model_save"] = true;
  c["zero_optimization"] = z;
  if (f.activation_checkpointing) c["activation_checkpointing"] = Json::object();
  run.ds_config = c;
  run.ds_source = a.source;
  run.zero_init = f.cpu_ram_efficient_loading;
}

// MULTI_GPU, MULTI_CPU, NO: plain data parallel.
void data_parallel_run(const AccelerateConfig& a, AccelerateRun& run) {
  Json c = auto_batch_config();
  c["gradient_accumulation_steps"] = "auto";
  c["gradient_clipping"] = "auto";
  c["zero_optimization"] = Json{{"stage", 0}};
  run.ds_config = c;
  run.ds_source = a.source;
}

bool enabled_in_file(const Json& c, const char* section) {
  if (!c.contains(section) || !c[section].is_object() || !c[section].contains("enabled"))
    return false;
  const Json& e = c[section]["enabled"];
  std::string v = e.is_string() ? e.get<std::string>() : e.dump();
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char ch) { return std::tolower(ch); });
  return v == "true";
}

// Accelerate's DeepSpeedPlugin.set_mixed_precision.
void set_mixed_precision(const AccelerateConfig& a, Json& c) {
  const MixedPrecision m = a.mixed_precision;
  if (m == MixedPrecision::fp16 && !c.contains("fp16"))
    c["fp16"] = Json{{"enabled", true}, {"auto_cast", true}};
  if (m == MixedPrecision::bf16 && !c.contains("bf16")) c["bf16"] = Json{{"enabled", true}};
  if (m != MixedPrecision::no) {
    const char* other = m == MixedPrecision::fp16 ? "bf16" : "fp16";
    if (enabled_in_file(c, other))
      fail(a, "mixed_precision",
           str(mixed_precision_name(m), " but the DeepSpeed config enables ", other,
               " (Accelerate refuses this too): make them agree"));
  }
  for (const char* dtype : {"fp16", "bf16"}) {
    if (!c.contains(dtype)) c[dtype] = Json{{"enabled", false}};
    Json& s = c[dtype];
    if (s.is_object() && s.contains("enabled") && s["enabled"] == "auto")
      s["enabled"] = mixed_precision_name(m) == dtype;
  }
}

// FSDP without mixed precision trains the dtype the model is loaded in: bf16 is the low-precision
// mode; fp16 would be f16 weights with no loss scaler, which zerotrain does not run.
void set_fsdp_loaded_dtype(const AccelerateConfig& a, const std::optional<std::string>& dtype,
                           Json& c) {
  if (!dtype || *dtype == "f32") return;
  if (*dtype == "fp16" || *dtype == "f16")
    fail(a, "mixed_precision",
         "no, with --dtype fp16 under FSDP: f16 weights without mixed precision train with no "
         "loss scaler, which zerotrain does not run (set mixed_precision: fp16)");
  if (fsdp_stage(a.fsdp.sharding) == 0)
    fail(a, "mixed_precision",
         "no, with --dtype bf16 under NO_SHARD: the low-precision mode (bf16 weights, no f32 "
         "masters) needs a sharded strategy (or set mixed_precision: bf16)");
  c["bf16"] = Json{
      {"enabled", true}, {"bf16_master_weights_and_grads", true}, {"bf16_optimizer_states", true}};
}

}  // namespace

AccelerateRun accelerate_ds_config(const AccelerateConfig& a,
                                   const std::optional<std::string>& given_dtype) {
  AccelerateRun run;
  switch (a.backend) {
    case AccelerateBackend::deepspeed:
      deepspeed_run(a, run);
      break;
    case AccelerateBackend::fsdp:
      fsdp_run(a, run);
      break;
    case AccelerateBackend::none:
    case AccelerateBackend::multi_cpu:
    case AccelerateBackend::multi_gpu:
      data_parallel_run(a, run);
      break;
  }
  if (a.backend == AccelerateBackend::fsdp && a.mixed_precision == MixedPrecision::no)
    set_fsdp_loaded_dtype(a, given_dtype, run.ds_config);
  else if (a.backend == AccelerateBackend::deepspeed || a.mixed_precision != MixedPrecision::no)
    set_mixed_precision(a, run.ds_config);
  // Data parallel without mixed precision: fp16/bf16 stay absent and --dtype decides.
  return run;
}

}  // namespace zt::config
