// The rows of zero_key_table.h, in the order parse_zero reads the keys (an error names the first
// bad key in that order).
#include "zerotrain/config/zero_key_table.h"

#include <stdexcept>

#include "zerotrain/core/error.h"

namespace zt::config {

namespace {

using P = OffloadParamConfig;
using O = OffloadOptimizerConfig;

constexpr std::string_view kOffloadOpt =
    "train: the optimizer offload policy (zero/offload_policy.h)";
constexpr std::string_view kOffloadParam =
    "train at stage 3: the parameter offload policy (ignored below stage 3, as DeepSpeed does)";
constexpr std::string_view kNowhere = "parsed; read nowhere";

// A row of zero_keys.h's: its path, least value and flag from there.
ZeroKey sized(const ZeroSizeKey& k, ZeroField field, std::string_view usage,
              std::string_view help = "", std::optional<int64_t> ConfigOverrides::*given = nullptr,
              bool config_check_flag = false) {
  return ZeroKey{.path = k.path,
                 .field = field,
                 .min = k.min,
                 .usage = usage,
                 .flag = k.flag,
                 .help = help,
                 .given = given,
                 .config_check_flag = config_check_flag};
}

ZeroKey flag(std::string_view path, ZeroField field, std::string_view usage, std::string_view flag,
             std::string_view help) {
  return ZeroKey{.path = path, .field = field, .usage = usage, .flag = flag, .help = help};
}

ZeroKey unread(std::string_view path, ZeroField field, std::string_view why = kNowhere,
               bool warn_when_set = false) {
  return ZeroKey{.path = path, .field = field, .usage = why, .warn_when_set = warn_when_set};
}

ZeroKey at_least(std::string_view path, ZeroField field, int64_t min, std::string_view usage) {
  return ZeroKey{.path = path, .field = field, .min = min, .usage = usage};
}

ZeroKey fraction(std::string_view path, ZeroField field, std::string_view usage) {
  return ZeroKey{.path = path, .field = field, .lo = 0.0, .hi = 1.0, .usage = usage};
}

// The Hugging Face Trainer's "auto" values from the hidden size h (trainer_config_finalize).
int64_t hidden_squared(int64_t h) {
  return h * h;
}
int64_t nine_tenths_hidden_squared(
    int64_t h) {  // int(0.9 * h * h), left to right in floating point
  return static_cast<int64_t>(0.9 * static_cast<double>(h) * static_cast<double>(h));
}
int64_t ten_hidden(int64_t h) {
  return 10 * h;
}

// A row filled from the hidden size (a sized row, then the trainer's rule).
ZeroKey hidden(ZeroKey k, int64_t (*rule)(int64_t), bool stage3_only) {
  k.hidden_auto = rule;
  k.hidden_auto_stage3 = stage3_only;
  return k;
}

std::vector<ZeroKey> rows() {
  using namespace zero_keys;
  using Z = ZeroConfig;
  return {
      ZeroKey{.path = "stage",
              .field = static_cast<int Z::*>(&Z::stage),
              .min = 0,
              .usage = "train: the ZeRO stage",
              .flag = "--zero-stage",
              .help = "ZeRO stage: 0 replicates everything, 1 shards the optimizer state, 2 also "
                      "the gradients, 3 also the parameters (same losses and weights in every "
                      "stage)",
              .given = &ConfigOverrides::zero_stage,
              .config_check_flag = true},
      unread("contiguous_gradients", &Z::contiguous_gradients,
             "parsed; read nowhere: gradients always live in contiguous flat buffers"),
      unread("reduce_scatter", &Z::reduce_scatter,
             "parsed; read nowhere: stages 2-3 always reduce-scatter"),
      hidden(sized(kReduceBucketSize, static_cast<int64_t Z::*>(&Z::reduce_bucket_size),
                   "train: gradient elements per reduce bucket",
                   "gradient elements per data-parallel all-reduce bucket",
                   &ConfigOverrides::reduce_bucket_size, true),
             hidden_squared, false),
      unread("use_multi_rank_bucket_allreduce", &Z::use_multi_rank_bucket_allreduce,
             "parsed; read nowhere: one all-reduce per bucket"),
      unread("allgather_partitions", &Z::allgather_partitions,
             "parsed; read nowhere: stages 1-2 always all-gather the updated shards"),
      sized(kAllgatherBucketSize, &Z::allgather_bucket_size,
            "parsed; read nowhere: one all-gather per parameter group"),
      ZeroKey{.path = "overlap_comm",
              .field = &Z::overlap_comm,
              .on_at_stage3 = true,
              .usage = "train: reduce-scatters and gathers on side streams (GPU)"},
      unread("load_from_fp32_weights", &Z::load_from_fp32_weights,
             "parsed; read nowhere: a resume always loads the f32 masters (DeepSpeed with false "
             "rebuilds them from the 16-bit weights)",
             true),
      unread("elastic_checkpoint", &Z::elastic_checkpoint,
             "parsed; read nowhere: checkpoints hold the full state, any stage resumes them"),
      ZeroKey{.path = "offload_param", .field = &Z::offload_param, .usage = kOffloadParam},
      flag("offload_param.device", &P::device, kOffloadParam, "--offload-param",
           "where the parameter shards live, ZeRO stage 3: none, cpu or nvme "
           "(zero_optimization.offload_param.device)"),
      ZeroKey{.path = "offload_param.nvme_path", .field = &P::nvme_path},
      sized(kParamBufferCount, &P::buffer_count, ""),
      sized(kParamBufferSize, &P::buffer_size, ""),
      sized(kParamMaxInCpu, &P::max_in_cpu, ""),
      ZeroKey{.path = "offload_param.pin_memory", .field = &P::pin_memory},
      ZeroKey{.path = "offload_optimizer", .field = &Z::offload_optimizer, .usage = kOffloadOpt},
      flag("offload_optimizer.device", &O::device, kOffloadOpt, "--offload-optimizer",
           "where the optimizer state (f32 masters, moments) lives and is stepped, ZeRO stages "
           "1-3: none (the GPU), cpu (host memory, DeepSpeed's CPU Adam's place) or nvme (swap "
           "files under --nvme-path); zero_optimization.offload_optimizer.device"),
      flag("offload_optimizer.nvme_path", &O::nvme_path, kOffloadOpt, "--nvme-path",
           "with an nvme offload: the directory (on a fast local disk) the run's swap files are "
           "made in (offload_*.nvme_path)"),
      sized(kOptimizerBufferCount, &O::buffer_count, ""),
      flag("offload_optimizer.pin_memory", &O::pin_memory, kOffloadOpt, "--pin-memory",
           "page-locked host memory for what is offloaded (faster copies; offload_*.pin_memory)"),
      unread("offload_optimizer.pipeline_read", &O::pipeline_read,
             "parsed; read nowhere: swap reads always overlap the step"),
      unread("offload_optimizer.pipeline_write", &O::pipeline_write,
             "parsed; read nowhere: swap writes always overlap the step"),
      unread("offload_optimizer.fast_init", &O::fast_init,
             "parsed; read nowhere: swap files are written once at setup"),
      fraction("offload_optimizer.ratio", &O::ratio, ""),
      unread("offload_optimizer.super_offload", &O::super_offload,
             "parsed; read nowhere: no SuperOffload (GH200's) mode"),
      unread("offload_optimizer.convert_grad_on_cpu", &O::convert_grad_on_cpu,
             "parsed; read nowhere: gradients are copied to the host in f32"),
      fraction("offload_optimizer.cpuadam_cores_perc", &O::cpuadam_cores_perc,
               "parsed; read nowhere: the host step uses OpenMP's threads"),
      sized(kSubGroupSize, &Z::sub_group_size,
            "train with offload: elements the host steps as one unit",
            "with offload: parameter elements the host optimizer steps as one unit while the "
            "next unit's copies are in flight (zero_optimization.sub_group_size)",
            &ConfigOverrides::sub_group_size),
      hidden(sized(kPrefetchBucketSize, static_cast<int64_t Z::*>(&Z::prefetch_bucket_size),
                   "train at stage 3: parameter elements prefetched at most",
                   "ZeRO stage 3: parameter elements gathered ahead of the running block at most",
                   &ConfigOverrides::prefetch_bucket_size, true),
             nine_tenths_hidden_squared, true),
      hidden(sized(kParamPersistenceThreshold,
                   static_cast<int64_t Z::*>(&Z::param_persistence_threshold),
                   "train at stage 3: blocks this small stay gathered",
                   "ZeRO stage 3: blocks with fewer parameter elements stay gathered between uses",
                   &ConfigOverrides::persistence_threshold, true),
             ten_hidden, true),
      at_least("stage3_model_persistence_threshold", &Z::model_persistence_threshold, 0,
               "parsed; read nowhere: the per-block threshold decides alone"),
      sized(kMaxLiveParameters, static_cast<int64_t Z::*>(&Z::max_live_parameters),
            "train at stage 3: gathered parameter elements at most",
            "ZeRO stage 3: gathered parameter elements at most while prefetching",
            &ConfigOverrides::max_live_parameters, true),
      sized(kMaxReuseDistance, &Z::max_reuse_distance,
            "parsed; read nowhere: stage 3 releases a block after its use (bounded prefetch)"),
      ZeroKey{.path = "stage3_gather_16bit_weights_on_model_save",
              .field = &Z::gather_16bit_weights_on_model_save,
              .usage = "every checkpoint also holds the model's Hugging Face weights "
                       "(--checkpoint-weights)"},
      unread("stage3_module_granularity_threshold", &Z::module_granularity_threshold,
             "parsed; read nowhere: blocks are the units"),
      unread("stage3_use_all_reduce_for_fetch_params", &Z::use_all_reduce_for_fetch_params,
             "parsed; read nowhere: parameters are all-gathered"),
      unread("stage3_allgather_sequential", &Z::allgather_sequential),
      at_least("stage3_partition_stream_chunk_size", &Z::partition_stream_chunk_size, 0, kNowhere),
      unread("ignore_unused_parameters", &Z::ignore_unused_parameters,
             "parsed; read nowhere: zerotrain's models use every parameter"),
      unread("legacy_stage1", &Z::legacy_stage1, "parsed; read nowhere: one stage 1"),
      unread("round_robin_gradients", &Z::round_robin_gradients,
             "parsed; read nowhere: one order of gradient copies"),
      at_least(
          "zero_hpz_partition_size", static_cast<int64_t Z::*>(&Z::zero_hpz_partition_size), 0,
          "train: hybrid sharding (FSDP's HSDP) at stages 1-3: values, gradients and optimizer "
          "state sharded within groups of this many consecutive ranks and replicated across the "
          "groups, gradients still summed over every rank (CPU ranks: in rank order, bitwise as "
          "plain ZeRO; NCCL: within the group, then across the groups). 1, the world size or "
          "more (a config written for larger nodes): plain ZeRO over every rank; a smaller "
          "value that does not divide the world size, or a divisor at stage 0: refused. "
          "Unlike DeepSpeed's hpZ (ZeRO++), which only keeps a secondary copy of the parameters "
          "within the node and shards the optimizer state over the world"),
      unread("zero_quantized_weights", &Z::zero_quantized_weights,
             "parsed; read nowhere: no ZeRO++ quantization, weights are gathered exactly", true),
      unread("zero_quantized_nontrainable_weights", &Z::zero_quantized_nontrainable_weights,
             "parsed; read nowhere: no ZeRO++ quantization, weights are gathered exactly", true),
      unread("zero_quantized_gradients", &Z::zero_quantized_gradients,
             "parsed; read nowhere: no ZeRO++ quantization, gradients are reduced exactly", true),
      unread("memory_efficient_linear", &Z::memory_efficient_linear,
             "parsed; read nowhere: zerotrain's linear"),
      unread("pipeline_loading_checkpoint", &Z::pipeline_loading_checkpoint),
      unread("override_module_apply", &Z::override_module_apply,
             "parsed; read nowhere: no module hooks"),
      unread("log_trace_cache_warnings", &Z::log_trace_cache_warnings,
             "parsed; read nowhere: no trace cache"),
      unread("enable_sanity_checks", &Z::enable_sanity_checks),
      unread("save_muon_momentum_buffer_in_memory", &Z::save_muon_momentum_buffer_in_memory,
             "parsed; read nowhere: no Muon"),
  };
}

constexpr std::string_view kStage3 = "stage3_";

}  // namespace

const std::vector<ZeroKey>& zero_key_table() {
  static const std::vector<ZeroKey> table = rows();
  return table;
}

const ZeroKey& zero_key(std::string_view path) {
  for (const ZeroKey& k : zero_key_table())
    if (k.path == path) return k;
  throw std::logic_error(str("zero_key: no row for zero_optimization.", path));
}

std::string_view zero_key_section(const ZeroKey& k) {
  const size_t dot = k.path.rfind('.');
  return dot == std::string_view::npos ? std::string_view() : k.path.substr(0, dot);
}

std::string_view zero_key_name(const ZeroKey& k) {
  const size_t dot = k.path.rfind('.');
  return dot == std::string_view::npos ? k.path : k.path.substr(dot + 1);
}

std::string_view zero_key_alias(const ZeroKey& k) {
  return k.path.starts_with(kStage3) ? k.path.substr(kStage3.size()) : std::string_view();
}

std::vector<const ZeroKey*> zero_flag_keys() {
  std::vector<const ZeroKey*> out;
  for (std::string_view path :
       {"stage", "reduce_bucket_size", "stage3_param_persistence_threshold",
        "stage3_prefetch_bucket_size", "stage3_max_live_parameters", "sub_group_size"})
    out.push_back(&zero_key(path));
  return out;
}

std::string zero_key_printed_path(std::string_view path) {
  if (path.find('.') != std::string_view::npos || path.starts_with(kStage3))
    return std::string(path);
  const std::string stage3 = str(kStage3, path);
  for (const ZeroKey& k : zero_key_table())
    if (k.path == stage3) return stage3;
  return std::string(path);
}

const ZeroKey* find_zero_key(std::string_view path) {
  const std::string printed = zero_key_printed_path(path);
  for (const ZeroKey& k : zero_key_table())
    if (k.path == printed) return &k;
  return nullptr;
}

bool zero_key_is_section(const ZeroKey& k) {
  return std::holds_alternative<std::optional<OffloadParamConfig> ZeroConfig::*>(k.field) ||
         std::holds_alternative<std::optional<OffloadOptimizerConfig> ZeroConfig::*>(k.field);
}

std::optional<std::string_view> zero_key_usage(std::string_view path) {
  const std::string printed = zero_key_printed_path(path);
  for (const ZeroKey& k : zero_key_table())
    if (k.path == printed && !zero_key_is_section(k) && !k.usage.empty()) return k.usage;
  // A key under an offload section without a text of its own (one the parser refuses too) takes
  // the section's.
  const size_t dot = printed.find('.');
  if (dot == std::string::npos) return std::nullopt;
  for (const ZeroKey& k : zero_key_table())
    if (zero_key_is_section(k) && k.path == std::string_view(printed).substr(0, dot))
      return k.usage;
  return std::nullopt;
}

}  // namespace zt::config
