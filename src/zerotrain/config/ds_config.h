// A DeepSpeed ds_config.json as typed, validated structures, with DeepSpeed 0.19's key names and
// defaults (deepspeed/runtime/config.py, zero/config.py, zero/offload_config.py,
// precision_config.py, lr_schedules.py). Every field below is filled: a key the file omits holds
// DeepSpeed's default. "auto" values are resolved from command-line values (overrides.h) before
// the structures are built. load_ds_config() in load.h produces a DsConfig; ds_config_json()
// prints it back. Tested by tests/config/ (a corpus of valid and invalid files in
// tests/fixtures/ds_configs/).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "zerotrain/config/aio_config.h"
#include "zerotrain/config/offload_device.h"
#include "zerotrain/config/scheduler_config.h"
#include "zerotrain/config/zero_engine_settings.h"
#include "zerotrain/config/zero_keys.h"

namespace zt::config {

// Precisions DeepSpeed names by string (communication_data_type, data_types.*).
enum class PrecisionName { fp16, bf16, fp32 };

// zero_optimization.offload_param: valid only with stage 3.
struct OffloadParamConfig {
  OffloadDevice device = OffloadDevice::none;
  std::optional<std::string> nvme_path;  // required when device is nvme
  int64_t buffer_count = zero_keys::kParamBufferCount.default_value;
  int64_t buffer_size = zero_keys::kParamBufferSize.default_value;
  int64_t max_in_cpu = zero_keys::kParamMaxInCpu.default_value;
  bool pin_memory = true;  // DeepSpeed 0.19.6's default (false before)
};

// zero_optimization.offload_optimizer: valid with stages 1, 2 and 3.
struct OffloadOptimizerConfig {
  OffloadDevice device = OffloadDevice::none;
  std::optional<std::string> nvme_path;
  int64_t buffer_count = zero_keys::kOptimizerBufferCount.default_value;
  bool pin_memory = true;  // DeepSpeed 0.19.6's default (false before)
  bool pipeline_read = false;
  bool pipeline_write = false;
  bool fast_init = false;
  double ratio = 1.0;  // < 1 (partial offload) only with stage 3
  bool super_offload = false;
  bool convert_grad_on_cpu = true;
  double cpuadam_cores_perc = 0.8;
};

// zero_optimization. The stage-3 keys are read under both DeepSpeed spellings (stage3_prefetch_
// bucket_size and prefetch_bucket_size, ...); giving both is an error. The keys the engine runs
// on (stage, reduce_bucket_size, the stage-3 bounds, zero_hpz_partition_size) are the base's.
struct ZeroConfig : ZeroEngineSettings {
  bool contiguous_gradients = true;
  bool reduce_scatter = true;
  bool use_multi_rank_bucket_allreduce = true;
  bool allgather_partitions = true;
  int64_t allgather_bucket_size = zero_keys::kAllgatherBucketSize.default_value;
  bool overlap_comm = false;  // DeepSpeed's default: true for stage 3, false otherwise
  bool load_from_fp32_weights = true;
  bool elastic_checkpoint = false;
  std::optional<OffloadParamConfig> offload_param;
  std::optional<OffloadOptimizerConfig> offload_optimizer;
  int64_t sub_group_size = zero_keys::kSubGroupSize.default_value;
  int64_t model_persistence_threshold = std::numeric_limits<int64_t>::max();  // sys.maxsize
  int64_t max_reuse_distance = zero_keys::kMaxReuseDistance.default_value;
  bool gather_16bit_weights_on_model_save = false;
  int64_t module_granularity_threshold = 0;
  bool use_all_reduce_for_fetch_params = false;
  bool allgather_sequential = false;
  int64_t partition_stream_chunk_size = 0;
  bool ignore_unused_parameters = true;
  bool legacy_stage1 = false;
  bool round_robin_gradients = false;
  bool zero_quantized_weights = false;
  bool zero_quantized_nontrainable_weights = false;
  bool zero_quantized_gradients = false;
  bool memory_efficient_linear = true;
  bool pipeline_loading_checkpoint = false;
  bool override_module_apply = true;
  bool log_trace_cache_warnings = false;
  bool enable_sanity_checks = false;
  bool save_muon_momentum_buffer_in_memory = false;
};

struct Fp16Config {
  bool enabled = false;
  bool auto_cast = false;
  double loss_scale = 0;  // 0: dynamic loss scaling
  int64_t initial_scale_power = 16;
  int64_t loss_scale_window = 1000;
  int64_t hysteresis = 2;
  bool consecutive_hysteresis = false;
  int64_t min_loss_scale = 1;
  bool fp16_master_weights_and_grads = false;
};

struct Bf16Config {
  bool enabled = false;
  bool immediate_grad_update = false;
  bool check_grad_overflow = true;  // DeepSpeed 0.19.6's default
  bool bf16_master_weights_and_grads = false;
  bool bf16_optimizer_states = false;
};

// NVIDIA Apex AMP: `enabled`, the rest is passed to amp.initialize (kept as JSON text).
struct AmpConfig {
  bool enabled = false;
  std::string params_json = "{}";
};

struct DataTypesConfig {
  std::optional<PrecisionName> grad_accum_dtype, param_dtype, buffer_dtype;
};

// Optimizers (optimizer.type, case-insensitive; params as DeepSpeed passes them).
struct AdamParams {  // "Adam" and "AdamW" (FusedAdam / torch.optim.AdamW)
  double lr = 1e-3;
  double beta1 = 0.9, beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
  bool adam_w_mode = true;  // forced true for AdamW
  bool torch_adam = false;
  bool amsgrad = false;
  bool bias_correction = true;
};
struct LambParams {  // FusedLamb
  double lr = 1e-3;
  double beta1 = 0.9, beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
  bool bias_correction = true;
  bool eps_inside_sqrt = false;
  double max_coeff = 10.0;
  double min_coeff = 0.01;
};
struct LionParams {  // FusedLion
  double lr = 1e-3;
  double beta1 = 0.9, beta2 = 0.999;
  double weight_decay = 0.0;
};
struct SgdParams {  // torch.optim.SGD (maximize false; foreach, fused: the same update)
  double lr = 1e-3;
  double momentum = 0.0;
  double dampening = 0.0;
  double weight_decay = 0.0;
  bool nesterov = false;
};
enum class OptimizerType { adam, adamw, lamb, lion, sgd };
struct OptimizerConfig {
  OptimizerType type = OptimizerType::adamw;
  std::variant<AdamParams, LambParams, LionParams, SgdParams> params;
  bool legacy_fusion = false;
};

struct ActivationCheckpointingConfig {
  bool present = false;  // the section is in the file (see [Note: activation checkpointing])
  bool partition_activations = false;
  bool contiguous_memory_optimization = false;
  bool cpu_checkpointing = false;
  std::optional<int64_t> number_checkpoints;
  bool synchronize_checkpoint_boundary = false;
  bool profile = false;
};

enum class TagValidation { warn, ignore, fail };
struct CheckpointConfig {
  TagValidation tag_validation = TagValidation::warn;
  bool load_universal = false;
  bool use_node_local_storage = false;
  bool parallel_write_pipeline_stage = false;
};

// Monitors: parsed for compatibility; zerotrain writes local files only and never contacts a
// service.
struct FileMonitorConfig {  // tensorboard, csv_monitor
  bool enabled = false;
  std::string output_path;
  std::string job_name = "DeepSpeedJobName";
};
struct WandbConfig {
  bool enabled = false;
  std::optional<std::string> group, team;
  std::string project = "deepspeed";
};
struct CometConfig {
  bool enabled = false;
  int64_t samples_log_interval = 100;
  std::optional<std::string> project, workspace, api_key, experiment_name, experiment_key, mode;
  std::optional<bool> online;
};

struct FlopsProfilerConfig {
  bool enabled = false;
  double recompute_fwd_factor = 0.0;
  int64_t profile_step = 1;
  int64_t module_depth = -1;
  int64_t top_modules = 1;
  bool detailed = true;
  std::optional<std::string> output_file;
};

struct CommsLoggerConfig {
  bool enabled = false;
  bool prof_all = true;
  std::vector<std::string> prof_ops;
  bool verbose = false;
  bool debug = false;
};

struct DsConfig {
  // The batch triple after DeepSpeed's rule (batch_rule.h), for `world_size` data-parallel ranks.
  int64_t train_batch_size = 0;
  int64_t train_micro_batch_size_per_gpu = 0;
  int64_t gradient_accumulation_steps = 0;
  int64_t world_size = 1;

  double gradient_clipping = 1.0;  // 0: off; DeepSpeed 0.19.6's default is 1.0 (0 before)
  std::optional<int64_t> steps_per_print;
  bool wall_clock_breakdown = false;
  bool memory_breakdown = false;
  bool dump_state = false;
  bool prescale_gradients = false;
  double gradient_predivide_factor = 1.0;
  bool sparse_gradients = false;
  bool zero_allow_untested_optimizer = false;
  bool zero_force_ds_cpu_optimizer = true;
  bool disable_allgather = false;
  bool dataloader_drop_last = false;
  std::optional<int64_t> vocabulary_size;
  std::optional<PrecisionName> communication_data_type;  // unset: decided from the precision
  DataTypesConfig data_types;

  Fp16Config fp16;
  Bf16Config bf16;
  AmpConfig amp;
  std::optional<OptimizerConfig> optimizer;
  std::optional<SchedulerConfig> scheduler;
  ZeroConfig zero_optimization;
  ActivationCheckpointingConfig activation_checkpointing;
  CheckpointConfig checkpoint;
  FileMonitorConfig tensorboard, csv_monitor;
  WandbConfig wandb;
  CometConfig comet;
  FlopsProfilerConfig flops_profiler;
  CommsLoggerConfig comms_logger;
  AioConfig aio;
};

// Names as DeepSpeed spells them: "bf16", "AdamW", "WARN" (offload_device.h and
// scheduler_config.h name the offload devices and the scheduler types).
std::string precision_name(PrecisionName p);
std::string optimizer_type_name(OptimizerType t);
std::string tag_validation_name(TagValidation t);

}  // namespace zt::config
