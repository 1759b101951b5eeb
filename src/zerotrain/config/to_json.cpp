// ds_config_json: the resolved DsConfig printed back as DeepSpeed JSON (see load.h).
#include <nlohmann/json.hpp>
#include <type_traits>

#include "zerotrain/config/load.h"
#include "zerotrain/config/zero_key_table.h"

namespace zt::config {

namespace {

using Json = nlohmann::json;

template <typename T>
Json opt(const std::optional<T>& v) {
  return v ? Json(*v) : Json(nullptr);
}

Json opt_precision(const std::optional<PrecisionName>& p) {
  return p ? Json(precision_name(*p)) : Json(nullptr);
}

template <typename S>
Json keys_json(const S& in, std::string_view section);

template <typename T>
Json value_json(const ZeroKey& k, const T& v) {
  if constexpr (std::is_same_v<T, OffloadDevice>)
    return offload_device_name(v);
  else if constexpr (std::is_same_v<T, std::optional<std::string>>)
    return opt(v);
  else if constexpr (std::is_same_v<T, std::optional<OffloadParamConfig>> ||
                     std::is_same_v<T, std::optional<OffloadOptimizerConfig>>)
    return v ? keys_json(*v, k.path) : Json(nullptr);
  else
    return Json(v);
}

// zero_optimization and its offload sections, a key per row of zero_key_table.h.
template <typename S>
Json keys_json(const S& in, std::string_view section) {
  Json j = Json::object();
  for_each_zero_key<S>(section, [&](const ZeroKey& k, auto member) {
    j[std::string(zero_key_name(k))] = value_json(k, in.*member);
  });
  return j;
}

Json optimizer_params_json(const OptimizerConfig& o) {
  return std::visit(
      [](const auto& p) -> Json {
        using P = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<P, AdamParams>)
          return {{"lr", p.lr},
                  {"betas", {p.beta1, p.beta2}},
                  {"eps", p.eps},
                  {"weight_decay", p.weight_decay},
                  {"adam_w_mode", p.adam_w_mode},
                  {"torch_adam", p.torch_adam},
                  {"amsgrad", p.amsgrad},
                  {"bias_correction", p.bias_correction}};
        else if constexpr (std::is_same_v<P, LambParams>)
          return {{"lr", p.lr},
                  {"betas", {p.beta1, p.beta2}},
                  {"eps", p.eps},
                  {"weight_decay", p.weight_decay},
                  {"bias_correction", p.bias_correction},
                  {"eps_inside_sqrt", p.eps_inside_sqrt},
                  {"max_coeff", p.max_coeff},
                  {"min_coeff", p.min_coeff}};
        else if constexpr (std::is_same_v<P, LionParams>)
          return {{"lr", p.lr}, {"betas", {p.beta1, p.beta2}}, {"weight_decay", p.weight_decay}};
        else
          return {{"lr", p.lr},
                  {"momentum", p.momentum},
                  {"dampening", p.dampening},
                  {"weight_decay", p.weight_decay},
                  {"nesterov", p.nesterov}};
      },
      o.params);
}

Json scheduler_params_json(const SchedulerConfig& s) {
  return std::visit(
      [](const auto& p) -> Json {
        using P = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<P, WarmupLrParams>)
          return {{"warmup_min_lr", p.warmup_min_lr},
                  {"warmup_max_lr", opt(p.warmup_max_lr)},
                  {"warmup_num_steps", p.warmup_num_steps},
                  {"warmup_type", warmup_type_name(p.warmup_type)},
                  {"last_batch_iteration", p.last_batch_iteration}};
        else if constexpr (std::is_same_v<P, WarmupDecayLrParams>)
          return {{"total_num_steps", p.total_num_steps},
                  {"warmup_min_lr", p.warmup_min_lr},
                  {"warmup_max_lr", p.warmup_max_lr},
                  {"warmup_num_steps", p.warmup_num_steps},
                  {"warmup_type", warmup_type_name(p.warmup_type)},
                  {"last_batch_iteration", p.last_batch_iteration}};
        else if constexpr (std::is_same_v<P, WarmupCosineLrParams>)
          return {{"total_num_steps", p.total_num_steps},
                  {"warmup_min_ratio", p.warmup_min_ratio},
                  {"warmup_num_steps", p.warmup_num_steps},
                  {"cos_min_ratio", p.cos_min_ratio},
                  {"warmup_type", warmup_type_name(p.warmup_type)},
                  {"last_batch_iteration", p.last_batch_iteration}};
        else if constexpr (std::is_same_v<P, OneCycleParams>)
          return {{"cycle_min_lr", p.cycle_min_lr},
                  {"cycle_max_lr", p.cycle_max_lr},
                  {"decay_lr_rate", p.decay_lr_rate},
                  {"cycle_first_step_size", p.cycle_first_step_size},
                  {"cycle_second_step_size", opt(p.cycle_second_step_size)},
                  {"cycle_first_stair_count", p.cycle_first_stair_count},
                  {"cycle_second_stair_count", opt(p.cycle_second_stair_count)},
                  {"decay_step_size", p.decay_step_size},
                  {"cycle_momentum", p.cycle_momentum},
                  {"cycle_min_mom", p.cycle_min_mom},
                  {"cycle_max_mom", p.cycle_max_mom},
                  {"decay_mom_rate", p.decay_mom_rate},
                  {"last_batch_iteration", p.last_batch_iteration}};
        else
          return {{"lr_range_test_min_lr", p.lr_range_test_min_lr},
                  {"lr_range_test_step_size", p.lr_range_test_step_size},
                  {"lr_range_test_step_rate", p.lr_range_test_step_rate},
                  {"lr_range_test_staircase", p.lr_range_test_staircase},
                  {"last_batch_iteration", p.last_batch_iteration}};
      },
      s.params);
}

Json file_monitor_json(const FileMonitorConfig& m) {
  return {{"enabled", m.enabled}, {"output_path", m.output_path}, {"job_name", m.job_name}};
}

Json sections_json(const DsConfig& c) {
  const ActivationCheckpointingConfig& a = c.activation_checkpointing;
  const FlopsProfilerConfig& f = c.flops_profiler;
  Json j;
  j["fp16"] = {{"enabled", c.fp16.enabled},
               {"auto_cast", c.fp16.auto_cast},
               {"loss_scale", c.fp16.loss_scale},
               {"initial_scale_power", c.fp16.initial_scale_power},
               {"loss_scale_window", c.fp16.loss_scale_window},
               {"hysteresis", c.fp16.hysteresis},
               {"consecutive_hysteresis", c.fp16.consecutive_hysteresis},
               {"min_loss_scale", c.fp16.min_loss_scale},
               {"fp16_master_weights_and_grads", c.fp16.fp16_master_weights_and_grads}};
  j["bf16"] = {{"enabled", c.bf16.enabled},
               {"immediate_grad_update", c.bf16.immediate_grad_update},
               {"check_grad_overflow", c.bf16.check_grad_overflow},
               {"bf16_master_weights_and_grads", c.bf16.bf16_master_weights_and_grads},
               {"bf16_optimizer_states", c.bf16.bf16_optimizer_states}};
  j["amp"] = Json::parse(c.amp.params_json);
  j["amp"]["enabled"] = c.amp.enabled;
  j["data_types"] = {{"grad_accum_dtype", opt_precision(c.data_types.grad_accum_dtype)},
                     {"param_dtype", opt_precision(c.data_types.param_dtype)},
                     {"buffer_dtype", opt_precision(c.data_types.buffer_dtype)}};
  j["activation_checkpointing"] = {
      {"partition_activations", a.partition_activations},
      {"contiguous_memory_optimization", a.contiguous_memory_optimization},
      {"cpu_checkpointing", a.cpu_checkpointing},
      {"number_checkpoints", opt(a.number_checkpoints)},
      {"synchronize_checkpoint_boundary", a.synchronize_checkpoint_boundary},
      {"profile", a.profile}};
  j["checkpoint"] = {
      {"tag_validation", tag_validation_name(c.checkpoint.tag_validation)},
      {"load_universal", c.checkpoint.load_universal},
      {"use_node_local_storage", c.checkpoint.use_node_local_storage},
      {"parallel_write", {{"pipeline_stage", c.checkpoint.parallel_write_pipeline_stage}}}};
  j["tensorboard"] = file_monitor_json(c.tensorboard);
  j["csv_monitor"] = file_monitor_json(c.csv_monitor);
  j["wandb"] = {{"enabled", c.wandb.enabled},
                {"group", opt(c.wandb.group)},
                {"team", opt(c.wandb.team)},
                {"project", c.wandb.project}};
  j["comet"] = {{"enabled", c.comet.enabled},
                {"samples_log_interval", c.comet.samples_log_interval},
                {"project", opt(c.comet.project)},
                {"workspace", opt(c.comet.workspace)},
                {"api_key", opt(c.comet.api_key)},
                {"experiment_name", opt(c.comet.experiment_name)},
                {"experiment_key", opt(c.comet.experiment_key)},
                {"online", opt(c.comet.online)},
                {"mode", opt(c.comet.mode)}};
  j["flops_profiler"] = {{"enabled", f.enabled},
                         {"recompute_fwd_factor", f.recompute_fwd_factor},
                         {"profile_step", f.profile_step},
                         {"module_depth", f.module_depth},
                         {"top_modules", f.top_modules},
                         {"detailed", f.detailed},
                         {"output_file", opt(f.output_file)}};
  j["comms_logger"] = {{"enabled", c.comms_logger.enabled},
                       {"prof_all", c.comms_logger.prof_all},
                       {"prof_ops", c.comms_logger.prof_ops},
                       {"verbose", c.comms_logger.verbose},
                       {"debug", c.comms_logger.debug}};
  j["aio"] = {{"io_backend", c.aio.io_backend},
              {"block_size", c.aio.block_size},
              {"queue_depth", c.aio.queue_depth},
              {"intra_op_parallelism", c.aio.intra_op_parallelism},
              {"single_submit", c.aio.single_submit},
              {"overlap_events", c.aio.overlap_events},
              {"use_gds", c.aio.use_gds}};
  return j;
}

}  // namespace

std::string ds_config_json(const DsConfig& c) {
  Json j = sections_json(c);
  j["train_batch_size"] = c.train_batch_size;
  j["train_micro_batch_size_per_gpu"] = c.train_micro_batch_size_per_gpu;
  j["gradient_accumulation_steps"] = c.gradient_accumulation_steps;
  j["gradient_clipping"] = c.gradient_clipping;
  j["steps_per_print"] = opt(c.steps_per_print);
  j["wall_clock_breakdown"] = c.wall_clock_breakdown;
  j["memory_breakdown"] = c.memory_breakdown;
  j["dump_state"] = c.dump_state;
  j["prescale_gradients"] = c.prescale_gradients;
  j["gradient_predivide_factor"] = c.gradient_predivide_factor;
  j["sparse_gradients"] = c.sparse_gradients;
  j["zero_allow_untested_optimizer"] = c.zero_allow_untested_optimizer;
  j["zero_force_ds_cpu_optimizer"] = c.zero_force_ds_cpu_optimizer;
  j["disable_allgather"] = c.disable_allgather;
  j["dataloader_drop_last"] = c.dataloader_drop_last;
  j["vocabulary_size"] = opt(c.vocabulary_size);
  j["communication_data_type"] = opt_precision(c.communication_data_type);
  j["zero_optimization"] = keys_json(c.zero_optimization, "");
  j["optimizer"] = c.optimizer ? Json{{"type", optimizer_type_name(c.optimizer->type)},
                                      {"params", optimizer_params_json(*c.optimizer)},
                                      {"legacy_fusion", c.optimizer->legacy_fusion}}
                               : Json(nullptr);
  j["scheduler"] = c.scheduler ? Json{{"type", scheduler_type_name(*c.scheduler)},
                                      {"params", scheduler_params_json(*c.scheduler)}}
                               : Json(nullptr);
  return j.dump(2);
}

}  // namespace zt::config
