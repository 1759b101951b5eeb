// Peak per-GPU memory of a run (see peak_estimate.h, [Note: zerotrain model states]).
#include "zerotrain/estimate/peak_estimate.h"

#include <algorithm>
#include <cmath>

#include "zerotrain/config/shard_group.h"
#include "zerotrain/config/zero_keys.h"
#include "zerotrain/estimate/checks.h"
#include "zerotrain/optim/state_slots.h"

namespace zt::estimate {

namespace {

// What the optimizer's state tensors are called in the table's rows.
std::string optimizer_state_name(const optim::OptimizerConfig& o) {
  switch (o.kind) {
    case optim::OptimizerKind::adam:
      return o.amsgrad ? "moments + max v" : "AdamW moments";
    case optim::OptimizerKind::lamb:
      return "Lamb moments";
    case optim::OptimizerKind::lion:
      return "Lion momentum";
    case optim::OptimizerKind::sgd:
      return "SGD momentum";
  }
  return "optimizer state";
}

void validate(const RunSetup& s) {
  config::check_zero_stage(s.stage, kComponent, "stage");
  require_positive(s.gpus, "gpus");
  require_positive(s.gpus_per_node, "gpus_per_node");
  const int64_t g = s.shard_group_size;
  const config::ShardGroupFit fit = config::shard_group_fit(g, s.gpus);
  if (fit == config::ShardGroupFit::invalid)
    throw ValueError(kComponent,
                     str("shard_group_size: must be 1 or a divisor of gpus ", s.gpus, ", got ", g));
  if (fit == config::ShardGroupFit::hybrid && s.stage == 0)
    throw ValueError(kComponent, str("shard_group_size ", g,
                                     ": hybrid sharding needs ZeRO stage 1, 2 or 3, got stage 0"));
  require_positive(s.seq, "seq");
  require_positive(s.micro_batch, "micro_batch");
  require_positive(s.grad_accum, "grad_accum");
  if (s.dtype != DType::bf16 && s.dtype != DType::f32)
    throw ValueError(kComponent, str("dtype: must be bf16 or f32, got ", dtype_name(s.dtype)));
  if (s.grad_dtype != DType::f32 && s.grad_dtype != s.dtype)
    throw ValueError(kComponent, str("grad_dtype: must be f32 or the dtype (", dtype_name(s.dtype),
                                     "), got ", dtype_name(s.grad_dtype)));
  if (s.comm_dtype != DType::f32 && s.comm_dtype != DType::bf16 && s.comm_dtype != DType::f16)
    throw ValueError(kComponent,
                     str("comm_dtype: must be f32, bf16 or f16, got ", dtype_name(s.comm_dtype)));
  if (s.precision == optim::Precision::low && s.dtype != DType::bf16)
    throw ValueError(kComponent, str("precision low: needs dtype bf16, got ", dtype_name(s.dtype)));
  if (s.precision == optim::Precision::low && s.optimizer.kind != optim::OptimizerKind::adam)
    throw ValueError(kComponent, str("precision low: Adam's alone, got ",
                                     optim::optimizer_kind_name(s.optimizer.kind)));
  if (s.precision == optim::Precision::low && s.optimizer.amsgrad)
    throw ValueError(kComponent, "amsgrad: needs f32 moments, which precision low does not keep");
  const bool opt_off = offloaded(s.offload_optimizer), param_off = offloaded(s.offload_param);
  if (opt_off && s.stage == 0)
    throw ValueError(kComponent, "offload_optimizer: needs ZeRO stage 1, 2 or 3, got stage 0");
  if (param_off && s.stage != 3)
    throw ValueError(kComponent, str("offload_param: needs ZeRO stage 3, got stage ", s.stage));
  if (s.host_run && (opt_off || param_off))
    throw ValueError(kComponent, "offload_optimizer: does not apply to a run on the CPU");
  using namespace config::zero_keys;
  require_zero_size(s.offload_buffers.sub_group_size, kSubGroupSize, "sub_group_size");
  require_positive(s.offload_buffers.optimizer_buffer_count, "offload_optimizer.buffer_count");
  require_positive(s.offload_buffers.param_buffer_count, "offload_param.buffer_count");
  require_positive(s.offload_buffers.param_buffer_size, "offload_param.buffer_size");
  require_zero_size(s.offload_buffers.param_max_in_cpu, kParamMaxInCpu, "offload_param.max_in_cpu");
  require_zero_size(s.buckets.reduce_bucket_size, kReduceBucketSize, "reduce_bucket_size");
  require_positive(s.buckets.allgather_bucket_size, "allgather_bucket_size");
  require_zero_size(s.buckets.prefetch_bucket_size, kPrefetchBucketSize, "prefetch_bucket_size");
  require_positive(s.buckets.max_live_parameters, "max_live_parameters");
}

// The GPUs each block is sharded over: all, or the shard group's with hybrid sharding.
int64_t shard_gpus(const RunSetup& s) {
  return config::shard_group_fit(s.shard_group_size, s.gpus) == config::ShardGroupFit::hybrid
             ? s.shard_group_size
             : s.gpus;
}

// Elements of every unit's shard, each padded to a multiple of W.
double sharded_params(const ParamCount& p, int64_t w) {
  double n = 0;
  for (const ParamUnit& u : p.units)
    n += static_cast<double>((u.params + w - 1) / w);
  return n;
}

// Elements of one nvme staging buffer: at least the largest block's shard, at most the shard.
double staging_elements(double wanted, const ParamCount& p, int64_t w, double shard) {
  const double largest = static_cast<double>((p.largest_unit() + w - 1) / w);
  return std::min(shard, std::max(wanted, largest));
}

// Buffers of `n` elements the parameter cache of max_in_cpu holds: as many as max_in_cpu fills,
// at most the shard's buffers beyond the staging ones ([Note: parameter swap cache]).
double param_cache_buffers(const OffloadBuffers& ob, double n, double shard) {
  const double units = std::ceil(shard / n);
  const double beyond = std::max(0.0, units - static_cast<double>(ob.param_buffer_count));
  return std::min(beyond, std::floor(ob.param_max_in_cpu / n));
}

}  // namespace

std::string describe(const RunSetup& s) {
  std::string d = str("stage ", s.stage);
  if (offloaded(s.offload_param))
    d += str(" + offload_param=", config::offload_device_name(s.offload_param));
  if (offloaded(s.offload_optimizer))
    d += str(" + offload_optimizer=", config::offload_device_name(s.offload_optimizer));
  if (config::shard_group_fit(s.shard_group_size, s.gpus) == config::ShardGroupFit::hybrid)
    d += str(", sharded in groups of ", s.shard_group_size);
  d += str(", micro-batch ", s.micro_batch);
  if (s.grad_accum > 1) d += str(", accumulation ", s.grad_accum);
  if (s.activation_checkpointing) d += ", activation checkpointing";
  if (s.grad_dtype != DType::f32) d += str(", ", dtype_name(s.grad_dtype), " gradients");
  if (s.comm_dtype != DType::f32) d += str(", reduced in ", dtype_name(s.comm_dtype));
  if (s.optimizer.kind != optim::OptimizerKind::adam)
    d += str(", ", optim::optimizer_kind_name(s.optimizer.kind));
  if (s.optimizer.kind == optim::OptimizerKind::adam && s.optimizer.amsgrad) d += ", amsgrad";
  if (s.precision == optim::Precision::low) d += ", low precision";
  return d;
}

PeakEstimate estimate_peak(const RunSetup& s) {
  validate(s);
  PeakEstimate e;
  e.setup = s;
  e.params = count_params(s.model);
  const double p = static_cast<double>(e.params.total);
  const int64_t sw = shard_gpus(s);
  const double shard = sharded_params(e.params, sw);
  const double vb = static_cast<double>(dtype_size(s.dtype));  // value bytes
  const bool low = s.precision == optim::Precision::low;
  const bool masters = s.dtype != DType::f32 && !low;
  const std::string vname = str("parameters (", dtype_name(s.dtype), ")");
  const std::string shard_note =
      sw == s.gpus
          ? str("1/", sw, " of each block, padded")
          : str("1/", sw, " of each block, padded; replicated in ", s.gpus / sw, " groups");

  auto add = [&](std::string name, double bytes, std::string note) {
    e.items.push_back({std::move(name), bytes, std::move(note)});
  };
  auto add_host = [&](std::string name, double bytes, std::string note) {
    e.host_items.push_back({std::move(name), bytes, std::move(note)});
  };
  auto add_disk = [&](std::string name, double bytes, std::string note) {
    e.disk_items.push_back({std::move(name), bytes, std::move(note)});
  };
  const OffloadBuffers& ob = s.offload_buffers;

  // Values. See [Note: offload layout] for where offload puts them.
  if (s.stage < 3) {
    add(vname, vb * p, "whole model");
  } else if (s.offload_param == OffloadDevice::cpu) {
    add(vname, 0, "shard on the host");
  } else if (s.offload_param == OffloadDevice::nvme) {
    add(vname, 0, "shard in swap files");
  } else {
    add(vname, vb * shard, shard_note);
  }
  const std::string host_vname = str("parameter shard (", dtype_name(s.dtype), ")");
  if (s.offload_param == OffloadDevice::cpu) {
    add_host(host_vname, vb * shard, "lives on the host only");
  } else if (s.offload_param == OffloadDevice::nvme) {
    add_disk(host_vname, vb * shard, "swap files");
    const double n = staging_elements(ob.param_buffer_size, e.params, sw, shard);
    add_host(str("parameter staging (", dtype_name(s.dtype), ")"),
             static_cast<double>(ob.param_buffer_count) * n * vb,
             str(ob.param_buffer_count, " buffers of ", static_cast<int64_t>(n), " elements"));
    const double cached = param_cache_buffers(ob, n, shard);
    if (cached > 0)
      add_host(str("parameter cache (", dtype_name(s.dtype), ")"), cached * n * vb,
               str(static_cast<int64_t>(cached), " buffers of ", static_cast<int64_t>(n),
                   " elements (max_in_cpu)"));
    if (offloaded(s.offload_optimizer)) {
      const double m = staging_elements(ob.sub_group_size, e.params, sw, shard);
      add_host(str("parameter values of a sub-group (", dtype_name(s.dtype), ")"), vb * m,
               "what the host optimizer steps");
    }
  } else if (offloaded(s.offload_optimizer)) {
    add_host(host_vname, vb * shard, "copy the host optimizer writes");
  }
  if (offloaded(s.offload_param) && !offloaded(s.offload_optimizer))
    add(str("parameter shard (", dtype_name(s.dtype), ")"), vb * shard,
        "the copy the device optimizer steps");
  // Gradients: the GPU's buffers are as without offload; the host adds a copy of the shard.
  const double gb = static_cast<double>(dtype_size(s.grad_dtype));
  const std::string gname = str("gradients (", dtype_name(s.grad_dtype), ")");
  if (s.stage < 2) {
    add(gname, gb * p, "whole model");
  } else {
    add(gname, gb * shard, shard_note);
  }
  if (offloaded(s.offload_optimizer))
    add_host(str("gradient shard (", dtype_name(s.grad_dtype), ")"), gb * shard,
             "copy of the reduced shard");
  // Masters and the update rule's state, as the state-slot table says: Adam's two moments (three
  // with amsgrad; the low-precision mode keeps two bf16 moments and no masters), Lamb's two,
  // Lion's one, SGD's momentum buffer.
  const double opt_elems = s.stage == 0 ? p : shard;
  double moment_bytes = 0;
  for (const optim::StateSlot& slot : optim::state_slots(s.dtype, s.precision, s.optimizer))
    if (slot.kind != optim::SlotKind::master)
      moment_bytes += static_cast<double>(dtype_size(slot.dtype));
  const double opt_bytes = ((masters ? 4 : 0) + moment_bytes) * opt_elems;
  const std::string moments = optimizer_state_name(s.optimizer);
  const std::string opt_name = low       ? str(moments, " (bf16, no masters)")
                               : masters ? str("masters + ", moments, " (f32)")
                                         : str(moments, " (f32)");
  if (s.offload_optimizer == OffloadDevice::cpu) {
    add(opt_name, 0, "on the host");
    add_host(opt_name, opt_bytes, shard_note);
  } else if (s.offload_optimizer == OffloadDevice::nvme) {
    add(opt_name, 0, "in swap files");
    add_disk(opt_name, opt_bytes, "swap files");
    const double n = staging_elements(ob.sub_group_size, e.params, sw, shard);
    add_host(str("optimizer staging (", low ? "bf16" : "f32", ")"),
             static_cast<double>(ob.optimizer_buffer_count) * n * (low ? 2.0 : 4.0),
             str(ob.optimizer_buffer_count, " buffers of ", static_cast<int64_t>(n), " elements"));
  } else {
    add(opt_name, opt_bytes, s.stage == 0 ? "whole model" : shard_note);
  }
  // Communication buffers.
  // The engine holds the whole gradient of the block being reduce-scattered and of the one
  // computing (zero/sharded_stage.cpp); reduce_bucket_size does not cut them.
  if (s.stage >= 2 && s.grad_accum > 1) {
    add(str("gradient accumulation (", dtype_name(s.grad_dtype), ")"), gb * p,
        "every block's full gradient between micro-steps");
  } else if (s.stage >= 2) {
    const double g = static_cast<double>(e.params.largest_unit()) +
                     static_cast<double>(e.params.second_largest_unit());
    add(str("gradient buckets (", dtype_name(s.grad_dtype), ")"), gb * g,
        "full gradients of 2 blocks in flight");
  }
  if (s.comm_dtype != s.grad_dtype) {
    const double largest = static_cast<double>(e.params.largest_unit());
    const double n = s.stage == 0 ? std::min(p, s.buckets.reduce_bucket_size + largest) : largest;
    add(str("communication buffer (", dtype_name(s.comm_dtype), ")"),
        static_cast<double>(dtype_size(s.comm_dtype)) * n,
        s.stage == 0 ? "largest bucket, cast for its all-reduce"
                     : "largest block's gradient, cast for its reduce-scatter");
  }
  if (s.stage == 3) {
    const double first = static_cast<double>(e.params.largest_unit());
    const double next = std::min(s.buckets.prefetch_bucket_size,
                                 static_cast<double>(e.params.second_largest_unit()));
    const double live = std::max(first, std::min(s.buckets.max_live_parameters, first + next));
    add(str("gathered parameters (", dtype_name(s.dtype), ")"), vb * live,
        "running block + prefetch");
  }
  // Activations and workspace.
  ActivationOptions ao;
  ao.micro_batch = s.micro_batch;
  ao.seq = s.seq;
  ao.dtype_bytes = static_cast<int64_t>(vb);
  ao.checkpointing = s.activation_checkpointing;
  e.activations = estimate_activations(s.model, ao);
  add(s.activation_checkpointing ? "activations (checkpointed)" : "activations", e.activations.peak,
      str("peak in the ", e.activations.phase, " phase"));
  if (!s.host_run) add("cuBLASLt workspace", kCublasWorkspaceBytes, "32 MiB, one stream");

  for (const MemoryItem& it : e.items)
    e.peak_allocated += it.bytes;
  if (!s.host_run)
    e.margin =
        kFragmentationFraction * e.peak_allocated + kContextBytes + (s.gpus > 1 ? kNcclBytes : 0.0);
  e.needed = e.peak_allocated + e.margin;
  for (const MemoryItem& it : e.host_items)
    e.host_per_gpu += it.bytes;
  for (const MemoryItem& it : e.disk_items)
    e.disk_per_gpu += it.bytes;
  e.host_per_node = e.host_per_gpu * static_cast<double>(s.gpus_per_node);
  e.disk_per_node = e.disk_per_gpu * static_cast<double>(s.gpus_per_node);
  return e;
}

}  // namespace zt::estimate
