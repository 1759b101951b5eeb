// An Accelerate config file (the YAML `accelerate config` writes, which `accelerate launch
// --config_file` reads), read into typed settings: the distributed type and its plugin section
// (deepspeed_config or fsdp_config), mixed_precision, use_cpu and the ranks (num_processes,
// num_machines, machine_rank, main_process_ip/port, gpu_ids). Keys as Accelerate treats them: an
// unknown top-level key is an error, as in Accelerate; a key Accelerate knows that zerotrain does
// not use, and an unknown key inside a plugin section (Accelerate passes those on unread), are
// named in one warning line. A file that is not YAML, a repeated key or a value of the wrong type
// is one line "[accelerate] <file>: <key>: <what is wrong>". accelerate_ds_config.h maps the
// result onto a ds_config. Tested by tests/config/test_accelerate_config.cpp.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zt::config {

// Accelerate's distributed_type values zerotrain runs; the others are refused by name.
enum class AccelerateBackend {
  none,       // NO: one process
  multi_cpu,  // MULTI_CPU: data parallel on CPU ranks
  multi_gpu,  // MULTI_GPU: data parallel (DDP), ZeRO stage 0
  deepspeed,  // DEEPSPEED: the deepspeed_config section or its deepspeed_config_file
  fsdp,       // FSDP: the fsdp_config section, mapped onto ZeRO stages
};

// mixed_precision: no, fp16 or bf16 (fp8 is refused).
enum class MixedPrecision { no, fp16, bf16 };

// FSDP's sharding strategies (their numeric forms 1-5 are read too) and what each is in ZeRO.
enum class FsdpSharding {
  full_shard,          // 1: stage 3
  shard_grad_op,       // 2: stage 2
  no_shard,            // 3: stage 0
  hybrid_shard,        // 4: stage 3, sharded inside a machine, replicated across machines
  hybrid_shard_zero2,  // 5: stage 2, likewise
};

// Where the processes run. num_processes counts every machine's, as in Accelerate.
struct AccelerateRanks {
  int64_t num_processes = 1;
  int64_t num_machines = 1;
  int64_t machine_rank = 0;
  std::optional<std::string> main_process_ip;
  std::optional<int64_t> main_process_port;
  std::optional<std::string> gpu_ids;  // "all" or a list such as "0,1"; unset: all
  int64_t processes_per_machine() const { return num_processes / num_machines; }
};

// deepspeed_config: the plugin's own keys, or deepspeed_config_file (then the JSON governs and
// the plugin keys other than zero3_init_flag must be absent, as in Accelerate).
struct DeepSpeedPlugin {
  std::optional<std::filesystem::path> config_file;    // relative to the YAML file's folder
  std::optional<int64_t> gradient_accumulation_steps;  // unset: "auto"
  std::optional<double> gradient_clipping;             // unset: none (DeepSpeed's 0)
  int64_t zero_stage = 2;
  std::string offload_optimizer_device = "none";  // none, cpu or nvme
  std::string offload_param_device = "none";
  std::optional<std::string> offload_optimizer_nvme_path;
  std::optional<std::string> offload_param_nvme_path;
  std::optional<bool> zero3_init_flag;  // unset: on at stage 3
  bool zero3_save_16bit_model = false;
  std::vector<std::string> plugin_keys;  // the plugin keys the file sets (for the file rule)
};

// fsdp_config. The wrap policy keys are accepted: zerotrain's units are its layers already.
struct FsdpPlugin {
  FsdpSharding sharding = FsdpSharding::full_shard;
  bool offload_params = false;
  bool activation_checkpointing = false;
  std::string state_dict_type = "FULL_STATE_DICT";  // FULL_, SHARDED_ or LOCAL_STATE_DICT
  bool cpu_ram_efficient_loading = true;
  bool sync_module_states = true;
};

struct AccelerateConfig {
  std::string source;  // the file, as errors and notes name it
  AccelerateBackend backend = AccelerateBackend::none;
  MixedPrecision mixed_precision = MixedPrecision::no;
  bool use_cpu = false;
  AccelerateRanks ranks;
  DeepSpeedPlugin deepspeed;
  FsdpPlugin fsdp;
  std::vector<std::string> warnings;  // one line each, "[accelerate] ..."
};

AccelerateConfig read_accelerate_config(const std::filesystem::path& file);
// `source` names the text in errors; a relative deepspeed_config_file is taken from `base_dir`.
AccelerateConfig parse_accelerate_config(std::string_view text, const std::string& source,
                                         const std::filesystem::path& base_dir);

// As Accelerate spells them: "DEEPSPEED", "fp16", "FULL_SHARD".
std::string_view backend_name(AccelerateBackend b);
std::string_view mixed_precision_name(MixedPrecision m);
std::string_view sharding_name(FsdpSharding s);

}  // namespace zt::config
