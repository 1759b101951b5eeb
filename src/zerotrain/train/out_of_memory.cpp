// The one-line out-of-memory error of a training run; see out_of_memory.h ([Note: out of memory]).
// Tested by tests/train/test_out_of_memory.cpp.
#include "zerotrain/train/out_of_memory.h"

#include <unistd.h>

#include <filesystem>
#include <optional>
#include <vector>

#include "zerotrain/config/shard_group.h"
#include "zerotrain/core/allocator.h"
#include "zerotrain/estimate/peak_estimate.h"
#include "zerotrain/io/hf_config.h"

namespace zt::train {

namespace {

namespace fs = std::filesystem;

// The allocator's message without its "[alloc] out of memory on cpu: " lead.
std::string_view body_of(const Error& e) {
  std::string_view s = e.what();
  const std::string prefix = str("[", e.component(), "] ");
  if (s.substr(0, prefix.size()) == prefix) s.remove_prefix(prefix.size());
  constexpr std::string_view lead = "out of memory on ";
  const size_t colon = s.find(": ");
  if (s.substr(0, lead.size()) == lead && colon != std::string_view::npos)
    s.remove_prefix(colon + 2);
  return s;
}

std::string bytes_text(double b) {
  return format_bytes(static_cast<size_t>(b > 0 ? b : 0));
}

double host_memory() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0.0;
}

// " and H of host memory per node", or "" without offload.
std::string host_text(const estimate::PeakEstimate& e) {
  return e.host_per_node > 0 ? str(" and ", bytes_text(e.host_per_node), " of host memory per node")
                             : std::string();
}

}  // namespace

std::string out_of_memory_advice(const TrainConfig& c, int world, const MemoryBudgets& b) {
  const fs::path config_path =
      fs::is_directory(c.paths.model) ? c.paths.model / "config.json" : c.paths.model;
  const estimate::RunSetup setup = run_setup(c, io::read_hf_config(config_path), world);
  const char* per = c.device.is_cpu() ? "rank" : "GPU";
  const estimate::PeakEstimate now = estimate::estimate_peak(setup);
  std::string s = str("; the run needs about ", bytes_text(now.needed), " per ", per,
                      host_text(now), " (estimated peak of ", estimate::describe(setup), ")");
  if (!(b.device > 0)) return s + "; the memory to aim at is unknown";
  // See [Note: out of memory]: an estimate under the budget of the memory that ran out asks for
  // 10% less than itself; the other memory keeps its budget. A host run searches no offload.
  const bool host_ran_out = b.host_ran_out && !setup.host_run;
  const bool missed = host_ran_out ? now.host_per_node <= b.host : now.needed <= b.device;
  double target = b.device, host = setup.host_run ? 0.0 : b.host;
  if (missed && host_ran_out) host = 0.9 * now.host_per_node;
  if (missed && !host_ran_out) target = 0.9 * now.needed;
  estimate::Recommendation r = estimate::recommend(setup, target, train_strategies(), host);
  const double budget = host_ran_out ? b.host : b.device;
  std::string aim =
      missed ? str("10% under that estimate, which missed (budget ", bytes_text(budget), ")")
             : bytes_text(budget);
  if (host_ran_out) aim = str(aim, " of host memory");
  if (r.found)
    return s + str("; fits in ", aim, ": ", estimate::describe(r.estimate.setup), " (about ",
                   bytes_text(r.estimate.needed), host_text(r.estimate),
                   "): ", setup_flags(c, r.estimate.setup));
  if (!setup.host_run) {
    const estimate::Recommendation off =
        estimate::recommend(setup, target, estimate::strategies_in_order(), host);
    if (off.found)
      return s + str("; only ", estimate::describe(off.estimate.setup), " fits in ", aim,
                     " (not in zerotrain train yet; about ", bytes_text(off.estimate.needed),
                     host_text(off.estimate), ")");
  }
  return s + str("; nothing zerotrain train runs fits in ", aim, ": the most frugal (",
                 estimate::describe(r.estimate.setup), ") needs about ",
                 bytes_text(r.estimate.needed), host_text(r.estimate),
                 "; use more ranks or a shorter --seq-len");
}

// Whether zerotrain train runs offload to NVMe (offload_*.device nvme): the one switch.
constexpr bool kTrainRunsNvme = true;

std::vector<estimate::Strategy> train_strategies() {
  std::vector<estimate::Strategy> runs;
  for (const estimate::Strategy& s : estimate::strategies_in_order())
    if (kTrainRunsNvme || (s.offload_optimizer != config::OffloadDevice::nvme &&
                           s.offload_param != config::OffloadDevice::nvme))
      runs.push_back(s);
  return runs;
}

double memory_budget(Device device) {
  const AllocatorStats s = default_allocator(device).stats();
  if (s.cap) return static_cast<double>(s.cap);
  return device.is_cuda() ? static_cast<double>(cuda_device_memory(device.index)) : host_memory();
}

double host_memory_budget() {
  const AllocatorStats s = cpu_allocator().stats();
  return s.cap ? static_cast<double>(s.cap) : host_memory();
}

estimate::RunSetup run_setup(const TrainConfig& c, const nn::ModelConfig& model, int world) {
  estimate::RunSetup s;
  s.model = model;
  s.stage = c.zero.stage;
  s.gpus = world;
  s.gpus_per_node = world;
  // Hybrid sharding: each rank holds the shards of plain ZeRO over its group. A size that does
  // not fit `world` is left to the engine's one check (zero::hybrid_sharding) and counted as 1.
  if (c.zero.stage > 0 && config::shard_group_fit(c.zero.zero_hpz_partition_size, world) ==
                              config::ShardGroupFit::hybrid)
    s.shard_group_size = c.zero.zero_hpz_partition_size;
  s.seq = c.data.seq_len;
  s.micro_batch = c.data.micro_batch;
  s.grad_accum = c.data.grad_accum;
  s.activation_checkpointing = c.activation_checkpointing;
  // Two-byte dtypes (bf16, f16) hold the same bytes; the estimate counts them as bf16, and so
  // the gradients and the reduction buffers of that size.
  auto counted = [](DType d) { return dtype_size(d) == 4 ? DType::f32 : DType::bf16; };
  s.dtype = counted(c.precision.dtype);
  s.grad_dtype = counted(c.precision.grad_accum_dtype);
  s.comm_dtype = c.precision.comm_dtype == c.precision.grad_accum_dtype ? s.grad_dtype
                                                                        : c.precision.comm_dtype;
  s.precision = c.precision.mode;
  s.buckets.reduce_bucket_size = static_cast<double>(c.zero.reduce_bucket_size);
  s.buckets.prefetch_bucket_size = static_cast<double>(c.zero.prefetch_bucket_size);
  s.buckets.max_live_parameters = static_cast<double>(c.zero.max_live_parameters);
  s.host_run = c.device.is_cpu();
  s.optimizer = c.optimizer;
  // A run on the CPU keeps whatever it offloads in the same host memory: the estimate counts it
  // where it is without offload.
  if (!s.host_run) {
    const zero::OffloadPolicy& p = c.zero.offload;
    s.offload_optimizer = p.optimizer.device;
    s.offload_param = p.params.device;
    s.offload_buffers.sub_group_size = static_cast<double>(p.sub_group_size);
    s.offload_buffers.optimizer_buffer_count = p.optimizer.buffer_count;
    s.offload_buffers.param_buffer_count = p.params.buffer_count;
    s.offload_buffers.param_buffer_size = static_cast<double>(p.params.buffer_size);
    s.offload_buffers.param_max_in_cpu = static_cast<double>(p.params.max_in_cpu);
  }
  return s;
}

std::string setup_flags(const TrainConfig& c, const estimate::RunSetup& s) {
  // Each change as {flag, ds_config key} and its value.
  struct Change {
    const char* flag;
    const char* key;
    std::string value;
  };
  std::vector<Change> changes = {{"--zero-stage", "zero_optimization.stage", str(s.stage)}};
  const zero::OffloadPolicy& p = c.zero.offload;
  const bool host_run = c.device.is_cpu();  // run_setup leaves a host run's offload out
  if (s.offload_optimizer != (host_run ? config::OffloadDevice::none : p.optimizer.device))
    changes.push_back({"--offload-optimizer", "zero_optimization.offload_optimizer.device",
                       config::offload_device_name(s.offload_optimizer)});
  if (s.offload_param != (host_run ? config::OffloadDevice::none : p.params.device))
    changes.push_back({"--offload-param", "zero_optimization.offload_param.device",
                       config::offload_device_name(s.offload_param)});
  const bool nvme = s.offload_optimizer == config::OffloadDevice::nvme ||
                    s.offload_param == config::OffloadDevice::nvme;
  if (nvme && p.optimizer.nvme_path.empty() && p.params.nvme_path.empty())
    changes.push_back({"--nvme-path",
                       s.offload_optimizer == config::OffloadDevice::nvme
                           ? "zero_optimization.offload_optimizer.nvme_path"
                           : "zero_optimization.offload_param.nvme_path",
                       "DIR"});
  changes.push_back({"--micro-batch", "train_micro_batch_size_per_gpu", str(s.micro_batch)});
  const int64_t rows = c.data.micro_batch * c.data.grad_accum;  // per rank per optimizer step
  if (s.micro_batch != c.data.micro_batch && rows % s.micro_batch == 0)
    changes.push_back(
        {"--grad-accum", "gradient_accumulation_steps", str(rows / s.micro_batch)});
  const bool keys = !c.paths.ds_config.empty();
  std::string f = keys ? str("in ", c.paths.ds_config.filename().string(), ": ") : "";
  for (size_t i = 0; i < changes.size(); ++i)
    f += keys ? str(i ? ", " : "", changes[i].key, " ", changes[i].value)
              : str(i ? " " : "", changes[i].flag, " ", changes[i].value);
  if (s.activation_checkpointing)
    f += keys ? "; and --activation-checkpointing" : " --activation-checkpointing";
  return f;
}

OutOfMemoryError out_of_memory_error(const TrainConfig& c, std::string_view where,
                                     const OutOfMemoryError& cause) {
  const int world = c.comm ? c.comm->size() : 1;
  std::string msg = str("out of memory in ", where, " on ", to_string(c.device));
  if (world > 1) msg += str(" (rank ", c.comm->rank(), " of ", world, ")");
  msg += str(": ", body_of(cause));
  try {
    MemoryBudgets b;
    b.host = host_memory_budget();
    // A GPU run whose host allocation failed (an offload's host memory) aims the host.
    b.host_ran_out =
        c.device.is_cuda() &&
        std::string_view(cause.what()).find("out of memory on cpu") != std::string_view::npos;
    b.device = memory_budget(c.device);
    msg += out_of_memory_advice(c, world, b);
  } catch (const std::exception& e) {
    msg += str("; no estimate: ", e.what());
  }
  return OutOfMemoryError("train", msg);
}

}  // namespace zt::train
