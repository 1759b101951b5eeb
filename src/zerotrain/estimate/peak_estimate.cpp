// Peak per-GPU memory of a run (see peak_estimate.h, [Note: zerotrain model states]).
#include "zerotrain/estimate/peak_estimate.h"

#include <algorithm>

#include "zerotrain/estimate/checks.h"

namespace zt::estimate {

namespace {

void validate(const RunSetup& s) {
  if (s.stage < 0 || s.stage > 3)
    throw ValueError(kComponent, str("stage: must be 0, 1, 2 or 3, got ", s.stage));
  require_positive(s.gpus, "gpus");
  require_positive(s.gpus_per_node, "gpus_per_node");
  require_positive(s.seq, "seq");
  require_positive(s.micro_batch, "micro_batch");
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
  if (s.precision == optim::Precision::low && s.amsgrad)
    throw ValueError(kComponent, "amsgrad: needs f32 moments, which precision low does not keep");
  if (s.offload_optimizer && s.stage == 0)
    throw ValueError(kComponent, "offload_optimizer: needs ZeRO stage 1, 2 or 3, got stage 0");
  if (s.offload_param && s.stage != 3)
    throw ValueError(kComponent, str("offload_param: needs ZeRO stage 3, got stage ", s.stage));
  if (s.offload_param && !s.offload_optimizer)
    throw ValueError(kComponent, "offload_param: needs offload_optimizer=cpu as well");
  if (s.host_run && (s.offload_optimizer || s.offload_param))
    throw ValueError(kComponent, "offload_optimizer: does not apply to a run on the CPU");
  require_non_negative(s.buckets.reduce_bucket_size, "reduce_bucket_size");
  require_positive(s.buckets.allgather_bucket_size, "allgather_bucket_size");
  require_non_negative(s.buckets.prefetch_bucket_size, "prefetch_bucket_size");
  require_positive(s.buckets.max_live_parameters, "max_live_parameters");
}

// Elements of every unit's shard, each padded to a multiple of W.
double sharded_params(const ParamCount& p, int64_t w) {
  double n = 0;
  for (const ParamUnit& u : p.units)
    n += static_cast<double>((u.params + w - 1) / w);
  return n;
}

}  // namespace

std::string describe(const RunSetup& s) {
  std::string d = str("stage ", s.stage);
  if (s.offload_param) d += " + offload_param=cpu";
  if (s.offload_optimizer) d += " + offload_optimizer=cpu";
  d += str(", micro-batch ", s.micro_batch);
  if (s.activation_checkpointing) d += ", activation checkpointing";
  if (s.grad_dtype != DType::f32) d += str(", ", dtype_name(s.grad_dtype), " gradients");
  if (s.comm_dtype != DType::f32) d += str(", reduced in ", dtype_name(s.comm_dtype));
  if (s.amsgrad) d += ", amsgrad";
  if (s.precision == optim::Precision::low) d += ", low precision";
  return d;
}

PeakEstimate estimate_peak(const RunSetup& s) {
  validate(s);
  PeakEstimate e;
  e.setup = s;
  e.params = count_params(s.model);
  const double p = static_cast<double>(e.params.total);
  const double shard = sharded_params(e.params, s.gpus);
  const double vb = static_cast<double>(dtype_size(s.dtype));  // value bytes
  const bool low = s.precision == optim::Precision::low;
  const bool masters = s.dtype != DType::f32 && !low;
  const std::string vname = str("parameters (", dtype_name(s.dtype), ")");
  const std::string shard_note = str("1/", s.gpus, " of each block, padded");

  auto add = [&](std::string name, double bytes, std::string note) {
    e.items.push_back({std::move(name), bytes, std::move(note)});
  };
  double host = 0;  // per GPU

  // Values.
  if (s.stage < 3) {
    add(vname, vb * p, "whole model");
  } else if (s.offload_param) {
    add(vname, 0, "shard on the host");
    host += vb * shard;
  } else {
    add(vname, vb * shard, shard_note);
  }
  // Gradients.
  const double gb = static_cast<double>(dtype_size(s.grad_dtype));
  const std::string gname = str("gradients (", dtype_name(s.grad_dtype), ")");
  if (s.stage < 2) {
    add(gname, gb * p, "whole model");
  } else if (s.offload_optimizer) {
    add(gname, 0, "shard on the host");
    host += gb * shard;
  } else {
    add(gname, gb * shard, shard_note);
  }
  // Masters and moments (f32): two moments, three with amsgrad; the low-precision mode keeps two
  // bf16 moments and no masters.
  const double opt_elems = s.stage == 0 ? p : shard;
  const double moment_bytes = low ? 4 : s.amsgrad ? 12 : 8;
  const double opt_bytes = ((masters ? 4 : 0) + moment_bytes) * opt_elems;
  const std::string moments = s.amsgrad ? "moments + max v" : "AdamW moments";
  const std::string opt_name = low       ? str(moments, " (bf16, no masters)")
                               : masters ? str("masters + ", moments, " (f32)")
                                         : str(moments, " (f32)");
  if (s.offload_optimizer) {
    add(opt_name, 0, "on the host");
    host += opt_bytes;
  } else {
    add(opt_name, opt_bytes, s.stage == 0 ? "whole model" : shard_note);
  }
  // Communication buffers.
  // The engine holds the whole gradient of the block being reduce-scattered and of the one
  // computing (zero/sharded_stage.cpp); reduce_bucket_size does not cut them.
  if (s.stage >= 2) {
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
  e.host_per_gpu = host;
  e.host_per_node = host * static_cast<double>(s.gpus_per_node);
  return e;
}

}  // namespace zt::estimate
