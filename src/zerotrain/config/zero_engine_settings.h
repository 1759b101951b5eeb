// The zero_optimization settings the ZeRO engine runs on, under DeepSpeed's names, held once:
// the ds_config's section (config::ZeroConfig, ds_config.h) and the engine's section
// (zero::ZeroConfig, zero/zero_config.h) both derive from ZeroEngineSettings, so the file's
// values reach the engine by one assignment. Defaults are zero_keys.h's rows (DeepSpeed 0.19's).
// Tested by tests/config/test_ds_train_config.cpp and tests/train/test_run_config.cpp.
#pragma once

#include <cstdint>

#include "zerotrain/config/zero_keys.h"

namespace zt::config {

struct ZeroEngineSettings {
  // ZeRO stage 0-3 (check_zero_stage): 1 shards the optimizer state, 2 also the gradients, 3 also
  // the parameters. Every stage gives bitwise the same losses and weights on a given world size.
  int stage = 0;
  // Gradient elements per reduction bucket; a bucket is cut once it holds at least this many
  // (zero/grad_buckets.h), so 0 reduces every block on its own.
  int64_t reduce_bucket_size = zero_keys::kReduceBucketSize.default_value;
  // Stage 3: blocks with fewer parameter elements stay gathered between uses
  // (stage3_param_persistence_threshold).
  int64_t param_persistence_threshold = zero_keys::kParamPersistenceThreshold.default_value;
  // Stage 3 prefetch bounds in elements (stage3_prefetch_bucket_size, stage3_max_live_parameters).
  int64_t prefetch_bucket_size = zero_keys::kPrefetchBucketSize.default_value;
  int64_t max_live_parameters = zero_keys::kMaxLiveParameters.default_value;
  // Hybrid sharding ([Note: hybrid sharding] in zero/shard_comms.h): 1 or the world size shards
  // over the whole world; another divisor g of the world size shards stages 1-3 within groups of
  // g consecutive ranks and replicates the shards across the groups (shard_group.h reads it).
  int64_t zero_hpz_partition_size = 1;
};

}  // namespace zt::config
