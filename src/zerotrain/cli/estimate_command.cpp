// `zerotrain estimate`: DeepSpeed's model-state tables (ZeRO-2 / ZeRO-3, every offload and
// zero_init row) from --params/--largest-layer or a config.json, and with --seq the peak per-GPU
// memory of a zerotrain run plus the fastest setup that fits --gpu-memory. The work lives in
// src/zerotrain/estimate/; this file only parses and prints.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "zerotrain/cli/commands.h"
#include "zerotrain/config/zero_keys.h"
#include "zerotrain/core/error.h"
#include "zerotrain/estimate/checks.h"
#include "zerotrain/estimate/deepspeed_model_states.h"
#include "zerotrain/estimate/param_count.h"
#include "zerotrain/estimate/peak_estimate.h"
#include "zerotrain/estimate/recommend.h"
#include "zerotrain/estimate/report.h"
#include "zerotrain/estimate/units.h"
#include "zerotrain/io/hf_config.h"
#include "zerotrain/optim/precision.h"

namespace zt::cli {

namespace {

using namespace zt::estimate;

struct EstimateArgs {
  std::string params, largest_layer, model;
  int64_t gpus_per_node = 1, nodes = 1, gpus = 0;
  int64_t shard_group_size = 1;
  int stage = 3;
  double buffer_factor = 1.5;
  std::string zero2_formula = "current";
  int64_t seq = 0, micro_batch = 1, grad_accum = 1;
  bool activation_checkpointing = false, json = false;
  bool amsgrad = false;
  bool gpus_per_node_given = false;
  bool gpus_given = false;
  std::string offload_optimizer = "none", offload_param = "none", dtype = "bf16";
  std::string grad_accum_dtype = "f32", comm_dtype = "f32", precision = "mixed";
  std::string gpu_memory = "80GiB", host_memory;
  // DeepSpeed's defaults (config/zero_keys.h), written as the help shows them ("1e9").
  std::string sub_group_size = config::short_count(config::zero_keys::kSubGroupSize.default_value);
  std::string param_buffer_size =
      config::short_count(config::zero_keys::kParamBufferSize.default_value);
  std::string param_max_in_cpu =
      config::short_count(config::zero_keys::kParamMaxInCpu.default_value);
  int64_t optimizer_buffer_count = config::zero_keys::kOptimizerBufferCount.default_value;
  int64_t param_buffer_count = config::zero_keys::kParamBufferCount.default_value;
  std::string reduce_bucket =
      config::short_count(config::zero_keys::kReduceBucketSize.default_value);
  std::string allgather_bucket =
      config::short_count(config::zero_keys::kAllgatherBucketSize.default_value);
  std::string prefetch_bucket =
      config::short_count(config::zero_keys::kPrefetchBucketSize.default_value);
  std::string max_live = config::short_count(config::zero_keys::kMaxLiveParameters.default_value);
};

const char* kFooter = R"(Examples:
  DeepSpeed's ZeRO-3 table for a 2.78B model with a 65.8M largest layer on one GPU:
    zerotrain estimate --params 2783930000 --largest-layer 65800000
  The same counted from a config.json, ZeRO-2, 2 nodes x 8 GPUs:
    zerotrain estimate --model config.json --stage 2 --num-nodes 2 --num-gpus-per-node 8
  Peak memory per GPU of a zerotrain run, and the fastest setup that fits an 80 GiB GPU:
    zerotrain estimate --model config.json --stage 0 --gpus 1 --seq 4096 --micro-batch 2
    zerotrain estimate --model DIR --stage 3 --gpus 4 --seq 4096 --micro-batch 1 \
      --offload-optimizer cpu --gpu-memory 80GiB --json
  GPT-2 XL with ZeRO-3 offload on one 24 GiB GPU and 128 GiB of host memory (GPU and host peak):
    zerotrain estimate --model assets/models/gpt2-xl/config.json --stage 3 --gpus 1 --seq 1024 \
      --micro-batch 16 --offload-optimizer cpu --offload-param cpu --gpu-memory 24GiB \
      --host-memory 128GiB
  ZeRO-Infinity: optimizer state and parameters in swap files (disk bytes reported apart):
    zerotrain estimate --model DIR --stage 3 --gpus 1 --seq 4096 --offload-optimizer nvme \
      --offload-param nvme --sub-group-size 1e8
Without --seq the output is DeepSpeed's estimate_zero{2,3}_model_states_mem_needs_all_cold table
(model states only: params, gradients, optimizer). With --seq it adds activations, ZeRO buffers,
workspace and a margin, and with offload the host memory and swap-file bytes per GPU and node
(see src/zerotrain/estimate/peak_estimate.h, [Note: offload layout]).
)";

int run_deepspeed(const EstimateArgs& a) {
  if (a.stage != 2 && a.stage != 3)
    throw ValueError(kComponent,
                     str("--stage: DeepSpeed's estimators cover stages 2 and 3, got ", a.stage,
                         " (add --seq for zerotrain's estimate of any stage)"));
  if (!a.model.empty() && !a.params.empty())
    throw ValueError(kComponent, "--params: give either --model or --params, not both");
  if (a.model.empty() && a.params.empty())
    throw ValueError(kComponent, "--params: missing (or give --model CONFIG)");
  double p = 0, l = 0;
  if (!a.model.empty()) {
    const ParamCount c = count_params(io::read_hf_config(a.model));
    p = static_cast<double>(c.total);
    l = static_cast<double>(c.largest_layer);
  } else {
    p = parse_count(a.params, "--params");
    require_param_count(p, "--params");
    if (!a.largest_layer.empty()) {
      l = parse_count(a.largest_layer, "--largest-layer");
      require_largest_layer(l, p, "--largest-layer");
    }
    if (a.stage == 3 && a.largest_layer.empty())
      throw ValueError(kComponent, "--largest-layer: needed for stage 3 with --params");
  }
  DeepSpeedSetup s;
  s.gpus_per_node = a.gpus_per_node;
  s.nodes = a.nodes;
  s.additional_buffer_factor = a.buffer_factor;
  const Zero2Formula f =
      a.zero2_formula == "documented" ? Zero2Formula::documented : Zero2Formula::current;
  const DeepSpeedTable t = a.stage == 2 ? zero2_table(p, s, f) : zero3_table(p, l, s);
  if (a.json) {
    std::printf("%s\n", deepspeed_json(t).dump(1).c_str());
  } else {
    std::printf("%s", format_table(t).c_str());
  }
  return 0;
}

OffloadDevice offload_device(const std::string& name) {
  return name == "nvme"  ? OffloadDevice::nvme
         : name == "cpu" ? OffloadDevice::cpu
                         : OffloadDevice::none;
}

int run_peak(const EstimateArgs& a) {
  if (a.model.empty())
    throw ValueError(kComponent, "--model: needed with --seq (activations depend on the shape)");
  if (!a.params.empty())
    throw ValueError(kComponent, "--params: not used with --seq; give --model CONFIG");
  config::check_zero_stage(a.stage, kComponent, "--stage");
  RunSetup s;
  s.model = io::read_hf_config(a.model);
  s.stage = a.stage;
  s.gpus = a.gpus > 0 ? a.gpus : a.gpus_per_node * a.nodes;
  // Without --num-gpus-per-node, --gpus N is one node of N GPUs.
  s.gpus_per_node = a.gpus_per_node_given ? a.gpus_per_node : s.gpus;
  s.shard_group_size = a.shard_group_size;
  s.seq = a.seq;
  s.micro_batch = a.micro_batch;
  s.grad_accum = a.grad_accum;
  s.activation_checkpointing = a.activation_checkpointing;
  s.optimizer.amsgrad = a.amsgrad;
  s.offload_optimizer = offload_device(a.offload_optimizer);
  s.offload_param = offload_device(a.offload_param);
  s.offload_buffers.sub_group_size = parse_count(a.sub_group_size, "--sub-group-size");
  s.offload_buffers.param_buffer_size = parse_count(a.param_buffer_size, "--param-buffer-size");
  s.offload_buffers.param_max_in_cpu = parse_count(a.param_max_in_cpu, "--param-max-in-cpu");
  s.offload_buffers.optimizer_buffer_count = a.optimizer_buffer_count;
  s.offload_buffers.param_buffer_count = a.param_buffer_count;
  s.dtype = a.dtype == "f32" ? DType::f32 : DType::bf16;
  s.grad_dtype = parse_dtype(a.grad_accum_dtype);
  s.comm_dtype = parse_dtype(a.comm_dtype);
  s.precision = optim::parse_precision(a.precision);
  s.buckets.reduce_bucket_size = parse_count(a.reduce_bucket, "--reduce-bucket-size");
  s.buckets.allgather_bucket_size = parse_count(a.allgather_bucket, "--allgather-bucket-size");
  s.buckets.prefetch_bucket_size = parse_count(a.prefetch_bucket, "--prefetch-bucket-size");
  s.buckets.max_live_parameters = parse_count(a.max_live, "--max-live-parameters");
  const double gpu_memory = parse_size(a.gpu_memory, "--gpu-memory");
  const double host_memory =
      a.host_memory.empty() ? 0.0 : parse_size(a.host_memory, "--host-memory");
  const PeakEstimate e = estimate_peak(s);
  const Recommendation r = recommend(s, gpu_memory, strategies_in_order(), host_memory);
  if (a.json) {
    nlohmann::json j = peak_json(e);
    j["recommendation"] = recommendation_json(r);
    std::printf("%s\n", j.dump(1).c_str());
  } else {
    std::printf("%s\n%s\n", format_peak(e).c_str(), r.line.c_str());
  }
  return 0;
}

// The model and the cluster of DeepSpeed's tables; returns --num-gpus-per-node (given or not
// changes what --gpus means).
CLI::Option* add_model_state_flags(CLI::App& cmd, EstimateArgs& a) {
  cmd.add_option("--params", a.params, "total parameters (2783930000, 2851e6, 1.5B)");
  cmd.add_option("--largest-layer", a.largest_layer,
                 "parameters of the largest layer (module), for ZeRO-3");
  cmd.add_option("--model", a.model, "a config.json, or a model directory holding one");
  CLI::Option* gpus_per_node =
      cmd.add_option("--num-gpus-per-node", a.gpus_per_node, "GPUs per node (default 1)");
  cmd.add_option("--num-nodes", a.nodes, "nodes (default 1)");
  cmd.add_option("--stage", a.stage, "ZeRO stage: 2 or 3 for DeepSpeed's tables, 0-3 with --seq")
      ->capture_default_str();
  cmd.add_option("--buffer-factor", a.buffer_factor, "DeepSpeed's additional_buffer_factor")
      ->capture_default_str();
  cmd.add_option("--zero2-formula", a.zero2_formula,
                 "ZeRO-2 per-GPU bytes without offload: current (DeepSpeed's code today, "
                 "2P+18P/G) or documented (its published tables, 4P+16P/G)")
      ->check(CLI::IsMember({"current", "documented"}))
      ->capture_default_str();
  return gpus_per_node;
}

// The run whose peak --seq estimates: its shape, GPUs and optimizer; returns --gpus.
CLI::Option* add_run_shape_flags(CLI::App& cmd, EstimateArgs& a) {
  cmd.add_option("--seq", a.seq, "sequence length: estimate a zerotrain run's peak memory")
      ->check(CLI::PositiveNumber);
  cmd.add_option("--micro-batch", a.micro_batch,
                 "sequences per GPU per micro-step (the recommendation tries it, then halves it)")
      ->capture_default_str();
  cmd.add_option("--grad-accum", a.grad_accum,
                 "micro-steps per optimizer step: above 1, stages 2-3 keep every block's full "
                 "gradient between them")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  CLI::Option* gpus =
      cmd.add_option("--gpus", a.gpus, "data-parallel GPUs in all (default: per node x nodes)");
  cmd.add_option("--shard-group-size", a.shard_group_size,
                 "hybrid sharding (zero_optimization.zero_hpz_partition_size): shard each block "
                 "over groups of this many GPUs, replicated across the groups (1, or all the GPUs "
                 "or more: over all GPUs)")
      ->capture_default_str();
  cmd.add_flag("--activation-checkpointing", a.activation_checkpointing,
               "recompute decoder layers in backward");
  cmd.add_flag("--amsgrad", a.amsgrad,
               "Adam with amsgrad: a third f32 optimizer state (4 more bytes per parameter)");
  return gpus;
}

// Where ZeRO-Offload and ZeRO-Infinity keep the state, and their staging buffers.
void add_offload_flags(CLI::App& cmd, EstimateArgs& a) {
  cmd.add_option("--offload-optimizer", a.offload_optimizer,
                 "none, cpu (optimizer state in host memory) or nvme (in swap files; the host "
                 "holds staging buffers), stages 1-3")
      ->check(CLI::IsMember({"none", "cpu", "nvme"}))
      ->capture_default_str();
  cmd.add_option("--offload-param", a.offload_param,
                 "none, cpu or nvme: where the parameter shards live (stage 3)")
      ->check(CLI::IsMember({"none", "cpu", "nvme"}))
      ->capture_default_str();
  cmd.add_option("--sub-group-size", a.sub_group_size,
                 "elements per optimizer staging buffer with --offload-optimizer nvme "
                 "(zero_optimization.sub_group_size)")
      ->capture_default_str();
  cmd.add_option("--optimizer-buffer-count", a.optimizer_buffer_count,
                 "offload_optimizer.buffer_count (nvme staging buffers)")
      ->capture_default_str();
  cmd.add_option("--param-buffer-size", a.param_buffer_size,
                 "offload_param.buffer_size in elements (nvme staging buffers)")
      ->capture_default_str();
  cmd.add_option("--param-buffer-count", a.param_buffer_count,
                 "offload_param.buffer_count (nvme staging buffers)")
      ->capture_default_str();
  cmd.add_option("--param-max-in-cpu", a.param_max_in_cpu,
                 "offload_param.max_in_cpu: parameter elements kept in host memory beside the "
                 "nvme staging buffers")
      ->capture_default_str();
  cmd.add_option("--host-memory", a.host_memory,
                 "host memory per node the offloads may hold (sizes as --gpu-memory); the "
                 "recommendation refuses setups whose host peak does not fit (default: not "
                 "limited)");
}

// The dtypes, the GPU memory to fit, the buckets and the output format.
void add_dtype_and_bucket_flags(CLI::App& cmd, EstimateArgs& a) {
  cmd.add_option("--dtype", a.dtype, "parameter and compute dtype: bf16 or f32")
      ->check(CLI::IsMember({"bf16", "f32"}))
      ->capture_default_str();
  cmd.add_option("--grad-accum-dtype", a.grad_accum_dtype,
                 "gradient accumulation dtype: f32, or bf16 with --dtype bf16")
      ->check(CLI::IsMember({"bf16", "f32"}))
      ->capture_default_str();
  cmd.add_option("--precision", a.precision,
                 "with --dtype bf16: mixed (f32 masters and moments, 12 optimizer bytes per "
                 "parameter) or low (bf16 moments, no masters: 4), as zerotrain train --precision")
      ->check(CLI::IsMember({"mixed", "low"}));
  cmd.add_option("--comm-dtype", a.comm_dtype, "dtype gradients are reduced in: f32, bf16, f16")
      ->check(CLI::IsMember({"bf16", "f32", "f16"}))
      ->capture_default_str();
  cmd.add_option("--gpu-memory", a.gpu_memory, "memory of one GPU for the recommendation")
      ->capture_default_str();
  cmd.add_option("--reduce-bucket-size", a.reduce_bucket,
                 str("elements (DeepSpeed's default ", a.reduce_bucket, ")"));
  cmd.add_option("--allgather-bucket-size", a.allgather_bucket,
                 str("elements (DeepSpeed's default ", a.allgather_bucket, ")"));
  cmd.add_option("--prefetch-bucket-size", a.prefetch_bucket,
                 str("stage3_prefetch_bucket_size in elements (default ", a.prefetch_bucket, ")"));
  cmd.add_option("--max-live-parameters", a.max_live,
                 str("stage3_max_live_parameters (default ", a.max_live, ")"));
  cmd.add_flag("--json", a.json, "machine-readable output");
}

}  // namespace

void add_estimate_command(CLI::App& app, std::function<int()>& action) {
  auto* cmd = app.add_subcommand(
      "estimate", "Estimate memory: DeepSpeed's model-state tables, or a zerotrain run's peak");
  auto a = std::make_shared<EstimateArgs>();
  CLI::Option* gpn = add_model_state_flags(*cmd, *a);
  CLI::Option* gpus = add_run_shape_flags(*cmd, *a);
  add_offload_flags(*cmd, *a);
  add_dtype_and_bucket_flags(*cmd, *a);
  cmd->footer(kFooter);
  cmd->callback([&action, a, gpn, gpus] {
    a->gpus_per_node_given = gpn->count() > 0;
    a->gpus_given = gpus->count() > 0;
    action = [a] {
      require_positive(a->gpus_per_node, "--num-gpus-per-node");
      require_positive(a->nodes, "--num-nodes");
      require_positive(a->buffer_factor, "--buffer-factor");
      if (a->gpus_given || a->gpus < 0) require_positive(a->gpus, "--gpus");
      return a->seq != 0 ? run_peak(*a) : run_deepspeed(*a);
    };
  });
}

}  // namespace zt::cli
