// The sharded-checkpoint seam (zero/shard_checkpoint.h) in one process: every stage writes its
// shard into memory and a fresh engine continues from it bitwise (zero/shard_round_trip.h); a
// store without a range names it. Multi-rank: tests/mpi/test_zero_shard_checkpoint.cpp.
#include <gtest/gtest.h>

#include "io/io_test_util.h"
#include "nn/nn_test_util.h"
#include "zero/shard_round_trip.h"

namespace zt {
namespace {

TEST(ZeroShardCheckpoint, EveryStageContinuesBitwiseFromItsShard) {
  for (int stage = 0; stage <= 3; ++stage)
    test::expect_shard_round_trip(test::tiny_config(nn::Family::llama), stage,
                                  zero::ZeroContext::one_process(Device::cpu(), {}), 0);
}

TEST(ZeroShardCheckpoint, AMissingRangeIsNamed) {
  zero::MemoryShardStore store;
  Tensor dst = Tensor::zeros({4}, DType::f32);
  test::expect_error<ValueError>(
      [&] {
        store.read({"layers.0.w.exp_avg", {8}, 4, 8}, dst, {});
      },
      {"[zero]", "layers.0.w.exp_avg [4, 8)", "not in this shard store"});
}

}  // namespace
}  // namespace zt
