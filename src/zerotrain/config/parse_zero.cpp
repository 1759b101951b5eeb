// zero_optimization with offload_param and offload_optimizer (DeepSpeed's zero/config.py and
// zero/offload_config.py): every key, both spellings of the stage-3 ones.
#include <string>

#include "zerotrain/config/parse_sections.h"
#include "zerotrain/core/error.h"

namespace zt::config {

namespace {

const std::vector<std::string> kDevices = {"none", "cpu", "nvme"};

OffloadDevice read_device(Section& s) {
  return static_cast<OffloadDevice>(s.get_choice("device", kDevices, 0, false));
}

OffloadParamConfig read_offload_param(Section& s) {
  OffloadParamConfig p;
  p.device = read_device(s);
  p.nvme_path = s.get_opt_string("nvme_path");
  p.buffer_count = s.get_int("buffer_count", p.buffer_count, zero_keys::kParamBufferCount.min);
  p.buffer_size = s.get_int("buffer_size", p.buffer_size, zero_keys::kParamBufferSize.min);
  p.max_in_cpu = s.get_int("max_in_cpu", p.max_in_cpu, zero_keys::kParamMaxInCpu.min);
  p.pin_memory = s.get_bool("pin_memory", p.pin_memory);
  s.finish();
  return p;
}

OffloadOptimizerConfig read_offload_optimizer(Section& s) {
  OffloadOptimizerConfig o;
  o.device = read_device(s);
  o.nvme_path = s.get_opt_string("nvme_path");
  o.buffer_count = s.get_int("buffer_count", o.buffer_count, zero_keys::kOptimizerBufferCount.min);
  o.pin_memory = s.get_bool("pin_memory", o.pin_memory);
  o.pipeline_read = s.get_bool("pipeline_read", o.pipeline_read);
  o.pipeline_write = s.get_bool("pipeline_write", o.pipeline_write);
  o.fast_init = s.get_bool("fast_init", o.fast_init);
  o.ratio = s.get_double("ratio", o.ratio, 0.0, 1.0);
  o.super_offload = s.get_bool("super_offload", o.super_offload);
  o.convert_grad_on_cpu = s.get_bool("convert_grad_on_cpu", o.convert_grad_on_cpu);
  o.cpuadam_cores_perc = s.get_double("cpuadam_cores_perc", o.cpuadam_cores_perc, 0.0, 1.0);
  s.finish();
  return o;
}

// A stage-3 key read under either spelling.
int64_t stage3_int(Section& s, const char* name, int64_t def, int64_t min = 0) {
  return s.get_int(s.pick_alias(name, std::string("stage3_") + name), def, min);
}

}  // namespace

void parse_zero(Section& s, ZeroConfig& z) {
  z.stage = s.get_int("stage", z.stage, 0);
  if (z.stage > 3) fail(s.path_of("stage"), str("expected 0, 1, 2 or 3, got ", z.stage));
  z.contiguous_gradients = s.get_bool("contiguous_gradients", z.contiguous_gradients);
  z.reduce_scatter = s.get_bool("reduce_scatter", z.reduce_scatter);
  z.reduce_bucket_size =
      s.get_int("reduce_bucket_size", z.reduce_bucket_size, zero_keys::kReduceBucketSize.min);
  z.use_multi_rank_bucket_allreduce =
      s.get_bool("use_multi_rank_bucket_allreduce", z.use_multi_rank_bucket_allreduce);
  z.allgather_partitions = s.get_bool("allgather_partitions", z.allgather_partitions);
  z.allgather_bucket_size = s.get_int("allgather_bucket_size", z.allgather_bucket_size,
                                      zero_keys::kAllgatherBucketSize.min);
  z.overlap_comm = s.get_opt_bool("overlap_comm").value_or(z.stage == 3);
  z.load_from_fp32_weights = s.get_bool("load_from_fp32_weights", z.load_from_fp32_weights);
  z.elastic_checkpoint = s.get_bool("elastic_checkpoint", z.elastic_checkpoint);
  if (auto p = s.get_section("offload_param")) z.offload_param = read_offload_param(*p);
  if (auto o = s.get_section("offload_optimizer")) z.offload_optimizer = read_offload_optimizer(*o);
  z.sub_group_size = s.get_int("sub_group_size", z.sub_group_size, zero_keys::kSubGroupSize.min);
  z.prefetch_bucket_size = stage3_int(s, "prefetch_bucket_size", z.prefetch_bucket_size,
                                      zero_keys::kPrefetchBucketSize.min);
  z.param_persistence_threshold =
      stage3_int(s, "param_persistence_threshold", z.param_persistence_threshold,
                 zero_keys::kParamPersistenceThreshold.min);
  z.model_persistence_threshold =
      stage3_int(s, "model_persistence_threshold", z.model_persistence_threshold);
  z.max_live_parameters = stage3_int(s, "max_live_parameters", z.max_live_parameters,
                                     zero_keys::kMaxLiveParameters.min);
  z.max_reuse_distance =
      stage3_int(s, "max_reuse_distance", z.max_reuse_distance, zero_keys::kMaxReuseDistance.min);
  z.gather_16bit_weights_on_model_save =
      s.get_bool(s.pick_alias("gather_16bit_weights_on_model_save",
                              "stage3_gather_16bit_weights_on_model_save"),
                 z.gather_16bit_weights_on_model_save);
  z.module_granularity_threshold =
      s.get_int(s.pick_alias("module_granularity_threshold", "stage3_module_granularity_threshold"),
                z.module_granularity_threshold);
  z.use_all_reduce_for_fetch_params = s.get_bool(
      s.pick_alias("use_all_reduce_for_fetch_params", "stage3_use_all_reduce_for_fetch_params"),
      z.use_all_reduce_for_fetch_params);
  z.allgather_sequential = s.get_bool(
      s.pick_alias("allgather_sequential", "stage3_allgather_sequential"), z.allgather_sequential);
  z.partition_stream_chunk_size =
      stage3_int(s, "partition_stream_chunk_size", z.partition_stream_chunk_size);
  z.ignore_unused_parameters = s.get_bool("ignore_unused_parameters", z.ignore_unused_parameters);
  z.legacy_stage1 = s.get_bool("legacy_stage1", z.legacy_stage1);
  z.round_robin_gradients = s.get_bool("round_robin_gradients", z.round_robin_gradients);
  z.zero_hpz_partition_size = s.get_int("zero_hpz_partition_size", z.zero_hpz_partition_size, 0);
  z.zero_quantized_weights = s.get_bool("zero_quantized_weights", z.zero_quantized_weights);
  z.zero_quantized_nontrainable_weights =
      s.get_bool("zero_quantized_nontrainable_weights", z.zero_quantized_nontrainable_weights);
  z.zero_quantized_gradients = s.get_bool("zero_quantized_gradients", z.zero_quantized_gradients);
  z.memory_efficient_linear = s.get_bool("memory_efficient_linear", z.memory_efficient_linear);
  z.pipeline_loading_checkpoint =
      s.get_bool("pipeline_loading_checkpoint", z.pipeline_loading_checkpoint);
  z.override_module_apply = s.get_bool("override_module_apply", z.override_module_apply);
  z.log_trace_cache_warnings = s.get_bool("log_trace_cache_warnings", z.log_trace_cache_warnings);
  z.enable_sanity_checks = s.get_bool("enable_sanity_checks", z.enable_sanity_checks);
  z.save_muon_momentum_buffer_in_memory =
      s.get_bool("save_muon_momentum_buffer_in_memory", z.save_muon_momentum_buffer_in_memory);
  s.finish();
}

}  // namespace zt::config
