// comm/host_reduce: sums in rank order for every dtype ([Note: deterministic reductions]).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "zerotrain/comm/host_reduce.h"
#include "zerotrain/core/error.h"

namespace zt::comm {
namespace {

TEST(HostReduce, F32SumsInRankOrder) {
  // (1e8 + 1) rounds back to 1e8 in f32, so rank order gives 0 where another order gives 1.
  std::vector<float> a = {1e8f}, b = {1.0f}, c = {-1e8f};
  const void* contrib[] = {a.data(), b.data(), c.data()};
  float out = -5;
  reduce_in_rank_order(contrib, 3, &out, 1, DType::f32, ReduceOp::sum);
  EXPECT_EQ(out, 0.0f);
  const void* reordered[] = {a.data(), c.data(), b.data()};
  reduce_in_rank_order(reordered, 3, &out, 1, DType::f32, ReduceOp::sum);
  EXPECT_EQ(out, 1.0f);
}

TEST(HostReduce, Bf16AccumulatesInF32AndRoundsOnce) {
  // 256 + 1 + 1 = 258 is exact in bf16; adding in bf16 would round 257 back to 256 twice.
  std::vector<bf16> a = {bf16(256.f)}, b = {bf16(1.f)}, c = {bf16(1.f)};
  const void* contrib[] = {a.data(), b.data(), c.data()};
  bf16 out;
  reduce_in_rank_order(contrib, 3, &out, 1, DType::bf16, ReduceOp::sum);
  EXPECT_EQ(static_cast<float>(out), 258.f);
}

TEST(HostReduce, F16Avg) {
  std::vector<f16> a = {f16(1.f), f16(-2.f)}, b = {f16(2.f), f16(3.f)};
  const void* contrib[] = {a.data(), b.data()};
  std::vector<f16> out(2);
  reduce_in_rank_order(contrib, 2, out.data(), 2, DType::f16, ReduceOp::avg);
  EXPECT_EQ(static_cast<float>(out[0]), 1.5f);
  EXPECT_EQ(static_cast<float>(out[1]), 0.5f);
}

TEST(HostReduce, IntegersWrap) {
  std::vector<uint8_t> a = {200, 3}, b = {100, 4};
  const void* c8[] = {a.data(), b.data()};
  std::vector<uint8_t> o8(2);
  reduce_in_rank_order(c8, 2, o8.data(), 2, DType::u8, ReduceOp::sum);
  EXPECT_EQ(o8[0], 44);  // 300 mod 256
  EXPECT_EQ(o8[1], 7);
  std::vector<int32_t> x = {INT32_MAX, -7}, y = {1, 2};
  const void* c32[] = {x.data(), y.data()};
  std::vector<int32_t> o32(2);
  reduce_in_rank_order(c32, 2, o32.data(), 2, DType::i32, ReduceOp::sum);
  EXPECT_EQ(o32[0], INT32_MIN);
  EXPECT_EQ(o32[1], -5);
  std::vector<int64_t> p = {int64_t{1} << 40}, q = {-3};
  const void* c64[] = {p.data(), q.data()};
  int64_t o64 = 0;
  reduce_in_rank_order(c64, 2, &o64, 1, DType::i64, ReduceOp::sum);
  EXPECT_EQ(o64, (int64_t{1} << 40) - 3);
}

TEST(HostReduce, OutputMayAliasAContribution) {
  std::vector<float> a = {1, 2, 3}, b = {10, 20, 30};
  const void* contrib[] = {a.data(), b.data()};
  reduce_in_rank_order(contrib, 2, b.data(), 3, DType::f32, ReduceOp::sum);
  EXPECT_EQ(b, (std::vector<float>{11, 22, 33}));
}

TEST(HostReduce, AvgOfIntegersIsRejected) {
  int32_t a = 1;
  const void* contrib[] = {&a};
  EXPECT_THROW(reduce_in_rank_order(contrib, 1, &a, 1, DType::i32, ReduceOp::avg), DTypeError);
}

}  // namespace
}  // namespace zt::comm
