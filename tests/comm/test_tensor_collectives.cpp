// comm/tensor_collectives: the Tensor front-ends over a one-rank communicator, and their errors.
#include <gtest/gtest.h>

#include "zerotrain/comm/self_communicator.h"
#include "zerotrain/comm/tensor_collectives.h"
#include "zerotrain/core/error.h"

namespace zt::comm {
namespace {

TEST(TensorCollectives, OneRankRoundTrip) {
  SelfCommunicator c(10.0);
  Tensor t = Tensor::from_floats({1, 2, 3, 4}, {2, 2}, DType::bf16);
  all_reduce(c, t, ReduceOp::avg, Stream::host());
  EXPECT_EQ(t.to_floats(), (std::vector<float>{1, 2, 3, 4}));
  Tensor shard = Tensor::zeros({4}, DType::bf16);
  reduce_scatter(c, t.flatten(), shard, ReduceOp::sum, Stream::host());
  EXPECT_EQ(shard.to_floats(), (std::vector<float>{1, 2, 3, 4}));
  Tensor full = Tensor::zeros({4}, DType::bf16);
  all_gather(c, shard, full, Stream::host());
  EXPECT_EQ(full.to_floats(), (std::vector<float>{1, 2, 3, 4}));
  broadcast(c, full, 0, Stream::host());
  EXPECT_EQ(full.to_floats(), (std::vector<float>{1, 2, 3, 4}));
}

TEST(TensorCollectives, Errors) {
  SelfCommunicator c(10.0);
  Tensor m = Tensor::from_floats({1, 2, 3, 4, 5, 6}, {2, 3}, DType::f32);
  EXPECT_THROW(all_reduce(c, m.transpose(0, 1), ReduceOp::sum, Stream::host()), ShapeError);
  EXPECT_THROW(all_reduce(c, Tensor(), ReduceOp::sum, Stream::host()), ValueError);
  Tensor shard = Tensor::zeros({5}, DType::f32);
  EXPECT_THROW(all_gather(c, shard, m.flatten(), Stream::host()), ShapeError);
  Tensor half = Tensor::zeros({6}, DType::f16);
  EXPECT_THROW(reduce_scatter(c, m.flatten(), half, ReduceOp::sum, Stream::host()), DTypeError);
}

}  // namespace
}  // namespace zt::comm
