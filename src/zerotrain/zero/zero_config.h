// The ZeRO section of the run configuration, as the user gives it (--zero-stage,
// --reduce-bucket-size, --stage3-* or a ds_config's zero_optimization): built and validated once
// (validate_zero_config), then handed to the engine (zero::ZeroOptions is built from it). Tested by
// tests/train/test_run_config.cpp and tests/config/test_ds_train_config.cpp.
#pragma once

#include <cstdint>

#include "zerotrain/config/zero_keys.h"
#include "zerotrain/zero/offload_policy.h"

namespace zt::zero {

struct ZeroConfig {
  // ZeRO stage 0-3 (zero_stage.h): 1 shards the optimizer state, 2 also the gradients, 3 also the
  // parameters. Every stage gives bitwise the same losses and weights on a given world size.
  int stage = 0;
  // Gradient elements per reduction bucket (zero_optimization.reduce_bucket_size); a bucket is cut
  // once it holds at least this many (grad_buckets.h), so 0 reduces every block on its own.
  int64_t reduce_bucket_elements = config::zero_keys::kReduceBucketSize.default_value;
  bool overlap_comm = true;  // zero_optimization.overlap_comm
  // Stage 3: blocks with fewer parameter elements stay gathered between uses
  // (zero_optimization.stage3_param_persistence_threshold).
  int64_t persistence_threshold = config::zero_keys::kParamPersistenceThreshold.default_value;
  // Stage 3 prefetch bounds in elements (stage3_prefetch_bucket_size, stage3_max_live_parameters).
  int64_t prefetch_elements = config::zero_keys::kPrefetchBucketSize.default_value;
  int64_t max_live_elements = config::zero_keys::kMaxLiveParameters.default_value;
  // Stage 3: DeepSpeed's zero.Init (shard_init.h): the full model is never built; each rank
  // generates (seeded init) or reads (the model directory's safetensors, its slices only) just
  // its value shards. A resume loads the checkpoint's full values as before. Same bits either way.
  bool zero_init = true;
  // Hybrid sharding (zero_optimization.zero_hpz_partition_size, [Note: hybrid sharding] in
  // shard_comms.h): 1 or the world size shards over the whole world; another divisor g of the
  // world size shards stages 1-3 within groups of g consecutive ranks and replicates the shards
  // (optimizer state included) across the groups. Bitwise the same results either way.
  int64_t shard_group_size = 1;
  // Where optimizer state and parameter shards live (offload_optimizer / offload_param): the
  // device, host memory or NVMe swap files (offload_policy.h; validate_offload_policy refuses an
  // optimizer offload below stage 1 and a parameter offload below stage 3).
  OffloadPolicy offload;
};

// The one check of every value above but shard_group_size (DeepSpeed's bounds: stage 0-3, sizes
// >= 0). Throws
// ValueError "[config] zero_optimization.<key> (--<flag>): must be ..., got <value>", or for a bad
// offload policy (validate_offload_policy).
void validate_zero_config(const ZeroConfig& z);

// The one check of shard_group_size, which needs the world size (make_zero_stage calls it):
// whether it asks for hybrid sharding on a world of `world_size` ranks: false for 1 and for
// world_size or more (one group holds the world). Throws ValueError naming
// zero_optimization.zero_hpz_partition_size, its value and the world size for a smaller value
// that does not divide it (or < 1), and for hybrid sharding at stage 0.
bool hybrid_sharding(const ZeroConfig& z, int world_size);

}  // namespace zt::zero
