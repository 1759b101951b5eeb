// Peak per-GPU memory of a zerotrain training run: model states for the ZeRO stage and offload in
// zerotrain's layout, ZeRO's communication buffers, the activations of one micro-batch
// (activation_memory.h) and the cuBLASLt workspace, then a stated margin for what the caching
// allocator's peak does not see. See [Note: zerotrain model states] and [Note: memory margin].
// Tested by tests/estimate/test_peak_estimate.cpp: measured peaks (bench/results/*.json) within
// 10%, and the orderings every stage and offload must obey.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "zerotrain/config/offload_device.h"
#include "zerotrain/config/zero_keys.h"
#include "zerotrain/core/dtype.h"
#include "zerotrain/estimate/activation_memory.h"
#include "zerotrain/estimate/param_count.h"
#include "zerotrain/nn/model_config.h"
#include "zerotrain/optim/optimizer_config.h"
#include "zerotrain/optim/precision.h"

namespace zt::estimate {

using config::OffloadDevice;

inline bool offloaded(OffloadDevice d) {
  return d != OffloadDevice::none;
}

// [Note: zerotrain model states]
// zerotrain keeps bf16 parameter values, f32 gradients (or bf16 with grad_dtype bf16:
// TrainConfig::precision.grad_accum_dtype, [Note: communication dtype] in zero/grad_comm.h), and
// for bf16 values an f32 master plus two f32 AdamW moments (optim/state_slots.h [Note: optimizer
// masters]), and a third, the running max of v, with amsgrad; f32 values are their own masters. The
// low-precision mode keeps two bf16 moments and no masters. Per GPU, with
// W GPUs and each block (embedding, decoder layer, head: the all-gather/reduce-scatter unit)
// sharded in ceil(n / W) pieces (with hybrid sharding, W is the shard group's size: every group
// holds the whole model):
//   stage 0: values, gradients, masters and moments whole.
//   stage 1: masters and moments sharded; gradients whole (reduce-scattered in place at the step).
//   stage 2: gradients sharded too; the full f32 gradients of two blocks are in flight (one being
//            reduce-scattered while the next computes), whole blocks whatever reduce_bucket_size.
//            With gradient accumulation every block's full gradient stays between micro-steps
//            (they accumulate there and are reduce-scattered on the last one only).
//   stage 3: values sharded too; the gathered bf16 values of the running block plus the prefetched
//            one (capped at stage3_prefetch_bucket_size, all at stage3_max_live_parameters) live.
// Offload ([Note: offload layout]) moves model states to the host or to swap files; the GPU's
// gradient buffers stay as without offload. A communication dtype other than the
// gradients' adds one temporary buffer of it while a gradient is reduced: the largest stage-0
// bucket (at most reduce_bucket_size plus one block) or the largest block's full gradient (stages
// 1-3); the reductions run one after another on one stream. All-reduce (stage 0) and the all-gather
// of updated values (stages 1-2) run in place: allgather_bucket_size bounds a message, not memory.
//
// [Note: offload layout]
// The layout of the offload engine (zero/offload_policy.h), per GPU, with `shard` the rank's
// elements of every block (as above) and S the optimizer bytes per element (masters 4 with 16-bit
// values + moments 8, 12 with amsgrad; low precision: 4; other update rules: their state slots):
//   offload_optimizer cpu (stages 1-3): S x shard in host memory (pinned with pin_memory), plus a
//     host copy of the rank's gradient shard (gradient dtype) and, unless offload_param moves the
//     value shard to the host anyway, a host copy of its value shard (the values the host Adam
//     writes, then copied to the GPU). The GPU keeps its values and gradient buffers as without
//     offload and no optimizer state.
//   offload_optimizer nvme: S x shard in swap files (disk bytes); the host holds the gradient and
//     value copies above plus buffer_count staging buffers of one sub-group's state (elements:
//     max(sub_group_size, the largest block's shard), at most the shard; 4 bytes, 2 in low
//     precision).
//   offload_param cpu (stage 3): the value shard lives in host memory only; the GPU holds only
//     the gathered blocks in flight, and without offload_optimizer a copy of the shard that the
//     device optimizer steps.
//   offload_param nvme: the value shard lives in swap files; the host holds buffer_count staging
//     buffers of max(buffer_size, the largest block's shard) elements (at most the shard) in the
//     value dtype and, with offload_optimizer, the values of the sub-group being stepped
//     (max(sub_group_size, the largest block's shard) elements, at most the shard), plus the
//     parameter cache of max_in_cpu: as many more buffers of that size as max_in_cpu elements
//     hold, at most the shard's buffers beyond buffer_count ([Note: parameter swap cache] in
//     zero/param_swap.h).
// pin_memory changes where host bytes live, not how many.

// A key's default (config/zero_keys.h) as the estimator's element count.
constexpr double default_elements(const config::ZeroSizeKey& key) {
  return static_cast<double>(key.default_value);
}

struct ZeroBuckets {  // DeepSpeed's defaults, in elements
  double reduce_bucket_size = default_elements(config::zero_keys::kReduceBucketSize);
  double allgather_bucket_size = default_elements(config::zero_keys::kAllgatherBucketSize);
  double prefetch_bucket_size = default_elements(config::zero_keys::kPrefetchBucketSize);
  double max_live_parameters = default_elements(config::zero_keys::kMaxLiveParameters);
};

// The nvme staging buffers (DeepSpeed's defaults): zero_optimization.sub_group_size,
// offload_optimizer.buffer_count, offload_param.buffer_count, buffer_size and max_in_cpu.
struct OffloadBuffers {
  double sub_group_size = default_elements(config::zero_keys::kSubGroupSize);
  int64_t optimizer_buffer_count = config::zero_keys::kOptimizerBufferCount.default_value;
  int64_t param_buffer_count = config::zero_keys::kParamBufferCount.default_value;
  double param_buffer_size = default_elements(config::zero_keys::kParamBufferSize);
  // Elements of the parameter cache beside the staging buffers.
  double param_max_in_cpu = default_elements(config::zero_keys::kParamMaxInCpu);
};

struct RunSetup {
  nn::ModelConfig model;
  int stage = 0;  // 0..3
  int64_t gpus = 1;
  int64_t gpus_per_node = 1;  // for the host memory of a node
  // Hybrid sharding (zero_optimization.zero_hpz_partition_size, [Note: hybrid sharding] in
  // zero/shard_comms.h): stages 1-3 shard each block over groups of this many GPUs and replicate
  // the shards, optimizer state included, across the groups; 1 or gpus: over all gpus.
  int64_t shard_group_size = 1;
  int64_t seq = 0;
  int64_t micro_batch = 1;
  // Micro-steps per optimizer step: above 1, stages 2-3 keep every block's full gradient between
  // the micro-steps (reduced only on the last one).
  int64_t grad_accum = 1;
  bool activation_checkpointing = false;
  OffloadDevice offload_optimizer = OffloadDevice::none;  // stages 1-3
  OffloadDevice offload_param = OffloadDevice::none;      // stage 3
  OffloadBuffers offload_buffers;                         // with nvme
  DType dtype = DType::bf16;                              // bf16 or f32
  DType grad_dtype = DType::f32;                          // gradient accumulation: f32 or `dtype`
  DType comm_dtype = DType::f32;  // gradient reduction across GPUs: f32, bf16 or f16
  // The update rule: its state slots (optim/state_slots.h) are the optimizer bytes per parameter
  // (Adam 8, 12 with amsgrad; Lamb 8; Lion 4; SGD 4 with momentum, else 0; plus 4 for masters).
  optim::OptimizerConfig optimizer;
  // low (with bf16): bf16 moments and no masters, 4 optimizer bytes per parameter instead of 12
  // ([Note: precision modes] in optim/precision.h).
  optim::Precision precision = optim::Precision::mixed;
  ZeroBuckets buckets;
  // A CPU run (zerotrain train --device cpu): what cpu_allocator() holds, without the GPU's
  // cuBLASLt workspace and margin (no cache, no CUDA context, no NCCL); offload does not apply.
  bool host_run = false;
};

// "stage 3 + offload_optimizer=cpu, micro-batch 2, activation checkpointing"
std::string describe(const RunSetup& setup);

// [Note: memory margin]
// The estimate's peak is what the caching allocator reports as peak allocated bytes (what
// train/step_measures.h and the benchmarks measure). A GPU also needs room for the allocator's
// cached but unused blocks (fragmentation, taken as 5% of the peak), the CUDA context and kernels
// (0.5 GiB) and, with more than one GPU, NCCL's buffers (0.5 GiB); `needed` adds them. A host run
// (RunSetup::host_run) has no margin: the CPU allocator caches nothing.
inline constexpr double kFragmentationFraction = 0.05;
inline constexpr double kContextBytes = 0.5 * 1073741824.0;
inline constexpr double kNcclBytes = 0.5 * 1073741824.0;
inline constexpr double kCublasWorkspaceBytes = 32.0 * 1048576.0;  // one compute stream

struct MemoryItem {
  std::string name;  // "parameters (bf16)"
  double bytes = 0;
  std::string note;  // how it was counted
};

struct PeakEstimate {
  RunSetup setup;
  ParamCount params;
  ActivationEstimate activations;
  std::vector<MemoryItem> items;  // on the GPU, summing to peak_allocated
  double peak_allocated = 0;
  double margin = 0;
  double needed = 0;                   // peak_allocated + margin
  std::vector<MemoryItem> host_items;  // what the offloads hold in host memory per GPU
  std::vector<MemoryItem> disk_items;  // what they hold in swap files per GPU
  double host_per_gpu = 0;             // sum of host_items
  double host_per_node = 0;            // host_per_gpu * gpus_per_node
  double disk_per_gpu = 0;             // sum of disk_items
  double disk_per_node = 0;            // disk_per_gpu * gpus_per_node
};

// Throws ValueError naming a bad field: stage outside 0..3, a shard_group_size that does not
// divide gpus or asks for hybrid sharding at stage 0, offload_param without stage 3,
// offload_optimizer at stage 0, offload in a host run, non-positive sizes, a dtype other than
// bf16/f32, precision low without bf16 or with amsgrad, or an invalid model config.
PeakEstimate estimate_peak(const RunSetup& setup);

}  // namespace zt::estimate
