// activation_checkpointing, checkpoint, the monitors (tensorboard, csv_monitor, wandb, comet),
// flops_profiler, comms_logger and aio, with DeepSpeed's keys and defaults.
#include "zerotrain/config/parse_sections.h"
#include "zerotrain/core/error.h"

namespace zt::config {

namespace {

void read_activation_checkpointing(Section& s, ActivationCheckpointingConfig& a) {
  a.present = true;
  a.partition_activations = s.get_bool("partition_activations", a.partition_activations);
  a.contiguous_memory_optimization =
      s.get_bool("contiguous_memory_optimization", a.contiguous_memory_optimization);
  a.cpu_checkpointing = s.get_bool("cpu_checkpointing", a.cpu_checkpointing);
  a.number_checkpoints = s.get_opt_int("number_checkpoints", 1);
  a.synchronize_checkpoint_boundary =
      s.get_bool("synchronize_checkpoint_boundary", a.synchronize_checkpoint_boundary);
  a.profile = s.get_bool("profile", a.profile);
  s.finish();
}

void read_checkpoint(Section& s, CheckpointConfig& c) {
  // DeepSpeed upper-cases tag_validation before comparing.
  c.tag_validation = static_cast<TagValidation>(
      s.get_choice("tag_validation", {"Warn", "Ignore", "Fail"}, 0, true));
  c.load_universal = s.get_bool("load_universal", c.load_universal);
  c.use_node_local_storage = s.get_bool("use_node_local_storage", c.use_node_local_storage);
  if (auto p = s.get_section("parallel_write")) {
    c.parallel_write_pipeline_stage = p->get_bool("pipeline_stage", false);
    p->finish();
  }
  s.finish();
}

void read_file_monitor(Section& s, FileMonitorConfig& m) {
  m.enabled = s.get_bool("enabled", m.enabled);
  m.output_path = s.get_string("output_path", m.output_path);
  m.job_name = s.get_string("job_name", m.job_name);
  s.finish();
}

void read_wandb(Section& s, WandbConfig& w) {
  w.enabled = s.get_bool("enabled", w.enabled);
  w.group = s.get_opt_string("group");
  w.team = s.get_opt_string("team");
  w.project = s.get_string("project", w.project);
  s.finish();
}

void read_comet(Section& s, CometConfig& c) {
  c.enabled = s.get_bool("enabled", c.enabled);
  c.samples_log_interval = s.get_int("samples_log_interval", c.samples_log_interval, 1);
  c.project = s.get_opt_string("project");
  c.workspace = s.get_opt_string("workspace");
  c.api_key = s.get_opt_string("api_key");
  c.experiment_name = s.get_opt_string("experiment_name");
  c.experiment_key = s.get_opt_string("experiment_key");
  c.online = s.get_opt_bool("online");
  c.mode = s.get_opt_string("mode");
  s.finish();
}

void read_flops_profiler(Section& s, FlopsProfilerConfig& f) {
  f.enabled = s.get_bool("enabled", f.enabled);
  f.recompute_fwd_factor = s.get_double("recompute_fwd_factor", f.recompute_fwd_factor, 0.0);
  f.profile_step = s.get_int("profile_step", f.profile_step, 1);
  f.module_depth = s.get_int("module_depth", f.module_depth, -1);
  f.top_modules = s.get_int("top_modules", f.top_modules, 1);
  f.detailed = s.get_bool("detailed", f.detailed);
  f.output_file = s.get_opt_string("output_file");
  s.finish();
}

void read_comms_logger(Section& s, CommsLoggerConfig& c) {
  c.enabled = s.get_bool("enabled", c.enabled);
  c.prof_all = s.get_bool("prof_all", c.prof_all);
  c.prof_ops = s.get_string_list("prof_ops");
  c.verbose = s.get_bool("verbose", c.verbose);
  c.debug = s.get_bool("debug", c.debug);
  s.finish();
}

void read_aio(Section& s, AioConfig& a) {
  // DeepSpeed's spellings of its two I/O backends, case-insensitive.
  const size_t backend = s.get_choice(
      "io_backend", {"async_io", "aio", "async", "deepnvme", "posix", "sync", "simple"}, 0, true);
  a.io_backend = backend < 4 ? "async_io" : "posix";
  a.block_size = s.get_int("block_size", a.block_size, 1);
  a.queue_depth = s.get_int("queue_depth", a.queue_depth, 1);
  a.intra_op_parallelism =
      s.get_int(s.pick_alias("intra_op_parallelism", "thread_count"), a.intra_op_parallelism, 1);
  a.single_submit = s.get_bool("single_submit", a.single_submit);
  a.overlap_events = s.get_bool("overlap_events", a.overlap_events);
  a.use_gds = s.get_bool("use_gds", a.use_gds);
  if (a.use_gds && a.io_backend == "posix")
    fail(s.path_of("use_gds"), "true needs io_backend \"async_io\"");
  s.finish();
}

}  // namespace

// The monitors and comms_logger are pydantic models in DeepSpeed 0.19.6 (get_section).
void parse_misc(Section& root, DsConfig& c) {
  if (auto s = root.get_section("activation_checkpointing"))
    read_activation_checkpointing(*s, c.activation_checkpointing);
  if (auto s = root.get_section("checkpoint")) read_checkpoint(*s, c.checkpoint);
  if (auto s = root.get_section("tensorboard")) read_file_monitor(*s, c.tensorboard);
  if (auto s = root.get_section("csv_monitor")) read_file_monitor(*s, c.csv_monitor);
  if (auto s = root.get_section("wandb")) read_wandb(*s, c.wandb);
  if (auto s = root.get_section("comet")) read_comet(*s, c.comet);
  if (auto s = root.get_section("flops_profiler")) read_flops_profiler(*s, c.flops_profiler);
  if (auto s = root.get_section("comms_logger")) read_comms_logger(*s, c.comms_logger);
  if (auto s = root.get_section("aio")) read_aio(*s, c.aio);
}

}  // namespace zt::config
