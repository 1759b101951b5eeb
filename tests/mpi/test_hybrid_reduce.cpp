// comm::hybrid_reduce_scatter ([Note: hybrid reduction]) over 2 and 4 MPI ranks: for every way of
// cutting the world (and a 3-rank part of it) into groups of g consecutive ranks, f32/bf16/f16,
// sum and avg, uneven chunk sizes and in place, bitwise equal to the flat reduce_scatter over the
// whole world; the naive order (within the group, then across) differs on the same inputs; the
// point-to-point exchange under it refuses a peer that is this rank. With one GPU per rank, the
// NCCL path (the naive order) stays within one rounding per rank of the host's sum.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "mpi/collective_data.h"
#include "mpi/mpi_test_env.h"
#include "zerotrain/comm/hybrid_reduce.h"
#include "zerotrain/comm/self_communicator.h"
#include "zerotrain/comm/shard_layout.h"
#include "zerotrain/core/device.h"
#include "zerotrain/core/error.h"
#include "zerotrain/core/tensor.h"

namespace zt::test {
namespace {

using comm::Communicator;
using comm::ReduceOp;

comm::Communicator& host() {
  return process_group().host();
}

// Values of mixed magnitudes, so that the order of the additions shows in the rounded sums.
std::vector<uint8_t> random_input(DType t, int rank, size_t n, size_t padded, unsigned seed) {
  std::mt19937 rng(seed * 7919u + static_cast<unsigned>(rank));
  std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
  std::uniform_int_distribution<int> exponent(-12, 12);
  auto b = make_buffer(t, n, [&](size_t) { return std::ldexp(mantissa(rng), exponent(rng)); });
  b.resize(padded * dtype_size(t), 0);  // zero padding
  return b;
}

// The flat reference: the world's reduce_scatter of the padded buffer, all-gathered.
std::vector<uint8_t> flat_reduction(Communicator& world, const std::vector<uint8_t>& in, DType t,
                                    const comm::ShardLayout& l, ReduceOp op) {
  const size_t es = dtype_size(t);
  std::vector<uint8_t> shard(l.shard_numel * es), all(l.padded_numel * es);
  world.reduce_scatter(in.data(), shard.data(), l.shard_numel, t, op, Stream::host());
  world.all_gather(shard.data(), all.data(), l.shard_numel, t, Stream::host());
  return all;
}

struct Split {
  std::unique_ptr<Communicator> group, replicas;
};

// Groups of g consecutive ranks of `world` and the replicas of each member.
Split split_hybrid(Communicator& world, int g) {
  const int me = world.rank();
  Split s;
  s.group = world.split(me / g, me);
  s.replicas = world.split(me % g, me);
  return s;
}

// Every dtype, op and size on `world` cut into groups of g: bitwise the flat reduction's chunk.
void expect_flat_bits(Communicator& world, int g) {
  ASSERT_EQ(world.size() % g, 0);
  const Split s = split_hybrid(world, g);
  ASSERT_EQ(s.group->size(), g);
  ASSERT_EQ(s.replicas->size(), world.size() / g);
  const int member = s.group->rank();
  const std::vector<size_t> sizes = {1, 3, 7, 1001, 4099};
  unsigned seed = 1;
  for (DType t : {DType::f32, DType::bf16, DType::f16})
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::avg})
      for (size_t n : sizes) {
        const size_t es = dtype_size(t), len = n * static_cast<size_t>(g);
        const comm::ShardLayout l = comm::shard_layout(len, world.size());
        const auto in = random_input(t, world.rank(), len, l.padded_numel, ++seed);
        const auto want = flat_reduction(world, in, t, l, op);
        std::vector<uint8_t> out(n * es, 0xAB);
        comm::hybrid_reduce_scatter(*s.group, *s.replicas, in.data(), out.data(), n, t, op,
                                    Stream::host());
        const auto* chunk = want.data() + static_cast<size_t>(member) * n * es;
        EXPECT_EQ(std::memcmp(out.data(), chunk, n * es), 0)
            << "W=" << world.size() << " g=" << g << " " << dtype_name(t) << " "
            << comm::reduce_op_name(op) << " n=" << n;
        auto in_place = in;
        uint8_t* own = in_place.data() + static_cast<size_t>(member) * n * es;
        comm::hybrid_reduce_scatter(*s.group, *s.replicas, in_place.data(), own, n, t, op,
                                    Stream::host());
        EXPECT_EQ(std::memcmp(own, chunk, n * es), 0)
            << "in place W=" << world.size() << " g=" << g << " " << dtype_name(t) << " n=" << n;
      }
}

TEST(HybridReduce, EqualsFlatReduceScatterForEveryGroupSize) {
  const int w = host().size();
  for (int g = 1; g <= w; ++g)
    if (w % g == 0) expect_flat_bits(host(), g);
}

TEST(HybridReduce, EqualsFlatOnThreeRanks) {
  if (host().size() < 4) GTEST_SKIP() << "needs 4 ranks";
  auto three = host().split(host().rank() < 3 ? 0 : -1, host().rank());
  if (!three) return;  // rank 3 sits this one out
  expect_flat_bits(*three, 1);
  expect_flat_bits(*three, 3);
}

TEST(HybridReduce, PiecesOfTheChainKeepTheBits) {
  const int w = host().size();
  const int g = w / 2;  // two groups: the chain runs over kHybridPiece pieces
  const Split s = split_hybrid(host(), g);
  const size_t n = comm::kHybridPiece + 3, len = n * static_cast<size_t>(g);
  const comm::ShardLayout l = comm::shard_layout(len, w);
  const auto in = random_input(DType::bf16, host().rank(), len, l.padded_numel, 99);
  const auto want = flat_reduction(host(), in, DType::bf16, l, ReduceOp::sum);
  std::vector<uint8_t> out(n * 2);
  comm::hybrid_reduce_scatter(*s.group, *s.replicas, in.data(), out.data(), n, DType::bf16,
                              ReduceOp::sum, Stream::host());
  EXPECT_EQ(
      std::memcmp(out.data(), want.data() + static_cast<size_t>(s.group->rank()) * n * 2, n * 2),
      0);
}

// The inputs above are order-sensitive: reducing within the group first, then across the groups,
// gives other bits for some element. (Guards the test against inputs whose sums are exact.)
TEST(HybridReduce, NaiveOrderDiffers) {
  if (host().size() < 4) GTEST_SKIP() << "needs 4 ranks";
  const Split s = split_hybrid(host(), 2);
  const size_t n = 4099, len = 2 * n;
  const comm::ShardLayout l = comm::shard_layout(len, host().size());
  const auto in = random_input(DType::f32, host().rank(), len, l.padded_numel, 5);
  const auto want = flat_reduction(host(), in, DType::f32, l, ReduceOp::sum);
  std::vector<float> naive(n);
  s.group->reduce_scatter(in.data(), naive.data(), n, DType::f32, ReduceOp::sum, Stream::host());
  s.replicas->all_reduce(naive.data(), naive.data(), n, DType::f32, ReduceOp::sum, Stream::host());
  EXPECT_NE(
      std::memcmp(naive.data(), want.data() + static_cast<size_t>(s.group->rank()) * n * 4, n * 4),
      0);
}

TEST(HybridReduce, ArgumentErrors) {
  const Split s = split_hybrid(host(), 1);
  int32_t x[1] = {1};
  EXPECT_THROW(comm::hybrid_reduce_scatter(*s.group, *s.replicas, x, x, 1, DType::i32,
                                           ReduceOp::sum, Stream::host()),
               DTypeError);
  float f = 1;
  EXPECT_THROW(host().exchange({{host().rank(), &f, 1}}, {}, DType::f32, Stream::host()),
               ValueError);
  EXPECT_THROW(host().exchange({}, {{host().size(), &f, 1}}, DType::f32, Stream::host()),
               ValueError);
  comm::SelfCommunicator self(10.0);
  EXPECT_THROW(self.exchange({}, {}, DType::f32, Stream::host()), ValueError);
}

// NCCL (one GPU per rank): the device path reduces within the group and then across the groups
// in NCCL's own order, so it agrees with the rank-ordered host sum within one rounding per rank.
TEST(HybridReduce, NcclNaiveOrderIsWithinOneRoundingPerRank) {
  comm::ProcessGroup& pg = process_group();
  if (cuda_device_count() < pg.world_size())
    GTEST_SKIP() << "needs one GPU per rank (" << pg.world_size() << ")";
  if (pg.world_size() < 4) GTEST_SKIP() << "needs 4 ranks";
  const std::unique_ptr<comm::Communicator> nccl = pg.make_device_communicator();
  const Device device = pg.local_device();
  const Stream stream = Stream::default_for(device);
  const int w = nccl->size(), me = nccl->rank(), g = 2;
  auto group = nccl->split(me / g, me);
  auto replicas = nccl->split(me % g, me);
  const Split host_split = split_hybrid(host(), g);
  const size_t n = 4099, len = n * g;
  const comm::ShardLayout l = comm::shard_layout(len, w);
  for (DType t : {DType::f32, DType::bf16}) {
    const auto in = random_input(t, me, len, l.padded_numel, 11);
    std::vector<uint8_t> want(n * dtype_size(t));
    comm::hybrid_reduce_scatter(*host_split.group, *host_split.replicas, in.data(), want.data(), n,
                                t, ReduceOp::sum, Stream::host());
    std::vector<float> magnitude(len, 0.0f);
    for (int r = 0; r < w; ++r) {
      const auto other = random_input(t, r, len, l.padded_numel, 11);
      for (size_t i = 0; i < len; ++i)
        magnitude[i] += std::abs(load_as_float(other.data(), t, i));
    }
    Tensor send = Tensor::empty({static_cast<int64_t>(len)}, t, Device::cpu());
    std::memcpy(send.data(), in.data(), len * dtype_size(t));
    const Tensor dev = send.to(device, stream);
    Tensor out = Tensor::zeros({static_cast<int64_t>(n)}, t, device, stream);
    comm::hybrid_reduce_scatter(*group, *replicas, dev.data(), out.data(), n, t, ReduceOp::sum,
                                stream);
    const std::vector<float> got = out.to_floats(stream);
    const double ulp = t == DType::f32 ? std::ldexp(1.0, -23) : std::ldexp(1.0, -8);
    const size_t first = static_cast<size_t>(group->rank()) * n;
    for (size_t i = 0; i < n; ++i) {
      const double expect = load_as_float(want.data(), t, i);
      const double tol = (w + 1) * ulp * magnitude[first + i];
      if (std::abs(got[i] - expect) > tol) {
        ADD_FAILURE() << dtype_name(t) << " element " << i << ": " << got[i] << " vs " << expect;
        break;
      }
    }
  }
}
}  // namespace
}  // namespace zt::test
