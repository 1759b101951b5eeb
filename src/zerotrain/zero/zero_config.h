// The ZeRO section of the run configuration, as the user gives it (--zero-stage,
// --reduce-bucket-size, --stage3-* or a ds_config's zero_optimization): built and validated once
// (validate_zero_config), then handed to the engine (zero::ZeroOptions is built from it). Tested by
// tests/train/test_run_config.cpp and tests/config/test_ds_train_config.cpp.
#pragma once

#include <cstdint>

#include "zerotrain/config/zero_engine_settings.h"
#include "zerotrain/zero/offload_policy.h"

namespace zt::zero {

// The engine's settings (stage, reduce_bucket_size, the stage-3 bounds, zero_hpz_partition_size)
// are config::ZeroEngineSettings', named and defaulted as the ds_config keys they come from.
struct ZeroConfig : config::ZeroEngineSettings {
  // Reduce-scatters and gathers on side streams (zero_optimization.overlap_comm). On without a
  // ds_config; a file's section gives DeepSpeed's default (on at stage 3 only).
  bool overlap_comm = true;
  // Stage 3: DeepSpeed's zero.Init (shard_init.h): the full model is never built; each rank
  // generates (seeded init) or reads (the model directory's safetensors, its slices only) just
  // its value shards. A resume loads the checkpoint's full values as before. Same bits either way.
  bool zero_init = true;
  // Where optimizer state and parameter shards live (offload_optimizer / offload_param): the
  // device, host memory or NVMe swap files (offload_policy.h; validate_offload_policy refuses an
  // optimizer offload below stage 1 and a parameter offload below stage 3).
  OffloadPolicy offload;
};

// The one check of every value above but zero_hpz_partition_size (DeepSpeed's bounds: stage 0-3,
// sizes >= 0). Throws ValueError "[config] zero_optimization.<key> (--<flag>): must be ..., got
// <value>", or for a bad offload policy (validate_offload_policy).
void validate_zero_config(const ZeroConfig& z);

// The one check of zero_hpz_partition_size, which needs the world size (make_zero_stage calls it):
// whether it asks for hybrid sharding on a world of `world_size` ranks: false for 1 and for
// world_size or more (one group holds the world). Throws ValueError naming
// zero_optimization.zero_hpz_partition_size, its value and the world size for a smaller value
// that does not divide it (or < 1), and for hybrid sharding at stage 0.
bool hybrid_sharding(const ZeroConfig& z, int world_size);

}  // namespace zt::zero
