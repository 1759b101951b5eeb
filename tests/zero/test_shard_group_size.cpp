// zero_optimization.zero_hpz_partition_size (ZeroConfig::zero_hpz_partition_size, [Note: hybrid
// sharding] in src/zerotrain/zero/shard_comms.h): 1 and the world size are plain ZeRO, another
// divisor is hybrid sharding at stages 1-3, anything else (and hybrid at stage 0) is one line
// naming the key, the value and the world size, also through make_zero_stage and from a ds_config.
// Multi-rank training with it: tests/mpi/test_zero_hybrid.cpp.
#include <gtest/gtest.h>

#include <string>

#include "nn/nn_test_util.h"
#include "zerotrain/config/load.h"
#include "zerotrain/core/error.h"
#include "zerotrain/nn/transformer.h"
#include "zerotrain/train/ds_train_config.h"
#include "zerotrain/zero/zero_stage.h"

namespace zt {
namespace {

zero::ZeroConfig with(int stage, int64_t group_size) {
  zero::ZeroConfig z;
  z.stage = stage;
  z.zero_hpz_partition_size = group_size;
  return z;
}

std::string refusal(const zero::ZeroConfig& z, int world) {
  try {
    zero::hybrid_sharding(z, world);
  } catch (const ValueError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(ShardGroupSize, OneAndTheWorldArePlainZero) {
  for (int stage = 0; stage <= 3; ++stage) {
    EXPECT_FALSE(zero::hybrid_sharding(with(stage, 1), 4));
    EXPECT_FALSE(zero::hybrid_sharding(with(stage, 4), 4));
    EXPECT_FALSE(zero::hybrid_sharding(with(stage, 1), 1));
  }
}

// Real configs set hpz to the GPUs of their nodes (8, 16): on a smaller world the one group is
// the world.
TEST(ShardGroupSize, AGroupLargerThanTheWorldIsTheWorld) {
  for (int stage = 0; stage <= 3; ++stage) {
    EXPECT_FALSE(zero::hybrid_sharding(with(stage, 8), 4));
    EXPECT_FALSE(zero::hybrid_sharding(with(stage, 16), 4));
    EXPECT_FALSE(zero::hybrid_sharding(with(stage, 2), 1));
  }
}

TEST(ShardGroupSize, ADivisorShardsStages1To3InGroups) {
  for (int stage = 1; stage <= 3; ++stage) {
    EXPECT_TRUE(zero::hybrid_sharding(with(stage, 2), 4));
    EXPECT_TRUE(zero::hybrid_sharding(with(stage, 4), 16));
  }
}

TEST(ShardGroupSize, OtherValuesAreOneLineNamingKeyValueAndWorld) {
  for (int64_t bad : {0, -2, 3}) {
    const std::string m = refusal(with(3, bad), 4);
    EXPECT_EQ(m, str("[config] zero_optimization.zero_hpz_partition_size: must be 1 or a divisor "
                     "of the world size 4, got ",
                     bad));
  }
  EXPECT_EQ(refusal(with(3, 3), 8),
            "[config] zero_optimization.zero_hpz_partition_size: must be 1 or a divisor of the "
            "world size 8, got 3");
  EXPECT_EQ(refusal(with(0, 2), 4),
            "[config] zero_optimization.zero_hpz_partition_size 2: hybrid sharding needs ZeRO "
            "stage 1, 2 or 3 (stage 0 shards nothing)");
}

TEST(ShardGroupSize, MakeZeroStageRunsAConfigForLargerNodesAsPlainZero) {
  nn::Transformer model(test::tiny_config(nn::Family::llama), {});
  zero::ZeroOptions o;
  o.config = with(3, 8);
  EXPECT_NO_THROW(
      zero::make_zero_stage(o, model.blocks(), zero::ZeroContext::one_process(Device::cpu(), {})));
  o.config = with(3, -1);
  EXPECT_THROW(
      zero::make_zero_stage(o, model.blocks(), zero::ZeroContext::one_process(Device::cpu(), {})),
      ValueError);
}

TEST(ShardGroupSize, DsConfigKeyMapsOntoTheZeroSection) {
  train::TrainConfig c;
  const train::GivenFlags given;
  const config::DsConfig ds = config::parse_ds_config(
                                  R"({"train_micro_batch_size_per_gpu": 1,
          "zero_optimization": {"stage": 3, "zero_hpz_partition_size": 8}})",
                                  "test", train::train_overrides(c, given, std::nullopt))
                                  .config;
  train::apply_ds_config(ds, given, c);
  EXPECT_EQ(c.zero.zero_hpz_partition_size, 8);
  EXPECT_EQ(c.zero.stage, 3);
}

}  // namespace
}  // namespace zt
