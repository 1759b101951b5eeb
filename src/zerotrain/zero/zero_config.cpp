// validate_zero_config (zero_config.h).
#include "zerotrain/zero/zero_config.h"

#include "zerotrain/config/shard_group.h"
#include "zerotrain/config/zero_keys.h"

#include "zerotrain/core/error.h"

namespace zt::zero {

void validate_zero_config(const ZeroConfig& z) {
  config::check_zero_stage(z.stage, "config", "zero_optimization.stage (--zero-stage)");
  using namespace config::zero_keys;
  config::check_zero_size(kReduceBucketSize, z.reduce_bucket_size);
  config::check_zero_size(kParamPersistenceThreshold, z.param_persistence_threshold);
  config::check_zero_size(kPrefetchBucketSize, z.prefetch_bucket_size);
  config::check_zero_size(kMaxLiveParameters, z.max_live_parameters);
  validate_offload_policy(z.offload, z.stage);
}

bool hybrid_sharding(const ZeroConfig& z, int world_size) {
  const int64_t g = z.zero_hpz_partition_size;
  const config::ShardGroupFit fit = config::shard_group_fit(g, world_size);
  if (fit == config::ShardGroupFit::plain) return false;
  if (fit == config::ShardGroupFit::invalid)
    throw ValueError("config", str("zero_optimization.zero_hpz_partition_size: must be 1 or a "
                                   "divisor of the world size ",
                                   world_size, ", got ", g));
  if (z.stage == 0)
    throw ValueError("config", str("zero_optimization.zero_hpz_partition_size ", g,
                                   ": hybrid sharding needs ZeRO stage 1, 2 or 3 (stage 0 "
                                   "shards nothing)"));
  return true;
}

}  // namespace zt::zero
