// The MPI backend over 2 and 4 ranks (ctest runs this binary under mpirun): every collective for
// uneven sizes and every dtype against locally computed expectations, the bitwise all_reduce ==
// reduce_scatter + all_gather property, in-place use, split, and argument errors.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "mpi/collective_data.h"
#include "mpi/mpi_test_env.h"
#include "zerotrain/comm/shard_layout.h"
#include "zerotrain/comm/tensor_collectives.h"
#include "zerotrain/core/error.h"
#include "zerotrain/core/tensor.h"

namespace zt::test {
namespace {

using comm::ReduceOp;

const DType kAllDTypes[] = {DType::f32, DType::bf16, DType::f16, DType::i32, DType::i64, DType::u8};
const size_t kSizes[] = {1, 3, 7, 64, 1001, 4099};

comm::Communicator& host() {
  return process_group().host();
}

TEST(MpiCollectives, RunsUnderMpirun) {
  EXPECT_EQ(process_group().env().source, comm::LaunchSource::openmpi);
  EXPECT_EQ(host().backend_name(), "mpi");
  EXPECT_EQ(host().size(), process_group().world_size());
  EXPECT_EQ(host().rank(), process_group().rank());
  EXPECT_GE(host().size(), 2);
}

TEST(MpiCollectives, AllReduceSumEveryDtype) {
  const int w = host().size(), me = host().rank();
  for (DType t : kAllDTypes)
    for (size_t n : kSizes) {
      auto in = rank_input(t, me, n);
      std::vector<uint8_t> out(in.size());
      host().all_reduce(in.data(), out.data(), n, t, ReduceOp::sum, Stream::host());
      EXPECT_EQ(out, expected_reduction(t, w, n, false)) << dtype_name(t) << " n=" << n;
      host().all_reduce(in.data(), in.data(), n, t, ReduceOp::sum, Stream::host());  // in place
      EXPECT_EQ(in, out) << "in place " << dtype_name(t) << " n=" << n;
    }
}

TEST(MpiCollectives, AllReduceAvgFloats) {
  const int w = host().size(), me = host().rank();
  for (DType t : {DType::f32, DType::bf16, DType::f16})
    for (size_t n : kSizes) {
      auto in = rank_input(t, me, n);
      std::vector<uint8_t> out(in.size());
      host().all_reduce(in.data(), out.data(), n, t, ReduceOp::avg, Stream::host());
      EXPECT_EQ(out, expected_reduction(t, w, n, true)) << dtype_name(t) << " n=" << n;
    }
}

TEST(MpiCollectives, ReduceScatterPaddedUneven) {
  const int w = host().size(), me = host().rank();
  for (DType t : kAllDTypes)
    for (size_t n : kSizes) {
      const size_t es = dtype_size(t);
      comm::ShardLayout l = comm::shard_layout(n, w);
      auto in = rank_input(t, me, n);
      in.resize(l.padded_numel * es, 0);  // zero padding
      std::vector<uint8_t> shard(l.shard_numel * es, 0xAB);
      host().reduce_scatter(in.data(), shard.data(), l.shard_numel, t, ReduceOp::sum,
                            Stream::host());
      auto full = expected_reduction(t, w, n, false);
      full.resize(l.padded_numel * es, 0);
      std::vector<uint8_t> want(
          full.begin() + static_cast<ptrdiff_t>(l.offset(me) * es),
          full.begin() + static_cast<ptrdiff_t>((l.offset(me) + l.shard_numel) * es));
      EXPECT_EQ(shard, want) << dtype_name(t) << " n=" << n;
    }
}

TEST(MpiCollectives, AllGatherPaddedUneven) {
  const int w = host().size(), me = host().rank();
  for (DType t : kAllDTypes)
    for (size_t n : kSizes) {
      const size_t es = dtype_size(t);
      comm::ShardLayout l = comm::shard_layout(n, w);
      auto global = rank_input(t, 3, n);  // the full buffer every rank should end up with
      std::vector<uint8_t> shard(l.shard_numel * es, 0);
      std::memcpy(shard.data(), global.data() + l.offset(me) * es, l.valid_numel(me) * es);
      std::vector<uint8_t> gathered(l.padded_numel * es, 0xCD);
      host().all_gather(shard.data(), gathered.data(), l.shard_numel, t, Stream::host());
      auto want = global;
      want.resize(l.padded_numel * es, 0);
      EXPECT_EQ(gathered, want) << dtype_name(t) << " n=" << n;
      // In place: my shard already sits at its offset of the output.
      std::vector<uint8_t> inplace(l.padded_numel * es, 0xCD);
      std::memcpy(inplace.data() + l.offset(me) * es, shard.data(), shard.size());
      host().all_gather(inplace.data() + l.offset(me) * es, inplace.data(), l.shard_numel, t,
                        Stream::host());
      EXPECT_EQ(inplace, want) << "in place " << dtype_name(t) << " n=" << n;
    }
}

// See [Note: deterministic reductions]: with values that round, all_reduce equals
// reduce_scatter + all_gather bit for bit, and both equal the f32 sum in rank order.
TEST(MpiCollectives, AllReduceEqualsReduceScatterPlusAllGatherBitwise) {
  const int w = host().size(), me = host().rank();
  const size_t n = 10007;
  for (DType t : {DType::f32, DType::bf16, DType::f16}) {
    auto random_input = [&](int rank) {
      std::mt19937 rng(1234u + static_cast<unsigned>(rank));
      std::uniform_real_distribution<float> u(-3.f, 3.f);
      return make_buffer(t, n, [&](size_t) { return static_cast<double>(u(rng)) * 1.7; });
    };
    const size_t es = dtype_size(t);
    auto in = random_input(me);
    std::vector<uint8_t> ar(in.size());
    host().all_reduce(in.data(), ar.data(), n, t, ReduceOp::sum, Stream::host());

    comm::ShardLayout l = comm::shard_layout(n, w);
    auto padded = in;
    padded.resize(l.padded_numel * es, 0);
    std::vector<uint8_t> shard(l.shard_numel * es), rsag(l.padded_numel * es);
    host().reduce_scatter(padded.data(), shard.data(), l.shard_numel, t, ReduceOp::sum,
                          Stream::host());
    host().all_gather(shard.data(), rsag.data(), l.shard_numel, t, Stream::host());
    rsag.resize(n * es);
    EXPECT_EQ(ar, rsag) << dtype_name(t);

    std::vector<std::vector<uint8_t>> inputs;
    for (int r = 0; r < w; ++r)
      inputs.push_back(random_input(r));
    auto sequential = make_buffer(t, n, [&](size_t i) {
      float acc = load_as_float(inputs[0].data(), t, i);
      for (int r = 1; r < w; ++r)
        acc += load_as_float(inputs[r].data(), t, i);
      return static_cast<double>(acc);
    });
    EXPECT_EQ(ar, sequential) << dtype_name(t);
  }
}

TEST(MpiCollectives, BroadcastFromLastRank) {
  const int w = host().size(), me = host().rank();
  for (DType t : kAllDTypes)
    for (size_t n : kSizes) {
      auto buf = rank_input(t, me, n);
      host().broadcast(buf.data(), n, t, w - 1, Stream::host());
      EXPECT_EQ(buf, rank_input(t, w - 1, n)) << dtype_name(t) << " n=" << n;
    }
}

TEST(MpiCollectives, SplitIntoEvenAndOddRanks) {
  const int w = host().size(), me = host().rank();
  // Key -rank reverses the order inside each group.
  auto sub = host().split(me % 2, -me);
  ASSERT_NE(sub, nullptr);
  std::vector<int> members;
  for (int r = w - 1; r >= 0; --r)
    if (r % 2 == me % 2) members.push_back(r);
  ASSERT_EQ(sub->size(), static_cast<int>(members.size()));
  EXPECT_EQ(members[static_cast<size_t>(sub->rank())], me);
  int64_t v = int64_t{1} << me, sum = 0;
  sub->all_reduce(&v, &sum, 1, DType::i64, ReduceOp::sum, Stream::host());
  int64_t want = 0;
  for (int r : members)
    want += int64_t{1} << r;
  EXPECT_EQ(sum, want);
  sub->barrier();
  // Rank 0 opts out of the next split.
  auto only_others = host().split(me == 0 ? -1 : 0, me);
  EXPECT_EQ(only_others == nullptr, me == 0);
  if (only_others) {
    EXPECT_EQ(only_others->size(), w - 1);
  }
  host().barrier();
}

TEST(MpiCollectives, TensorFrontEnds) {
  const int w = host().size(), me = host().rank();
  comm::ShardLayout l = comm::shard_layout(10, w);
  Tensor full = Tensor::zeros({static_cast<int64_t>(l.padded_numel)}, DType::f32);
  for (size_t i = 0; i < 10; ++i)
    full.data_as<float>()[i] = static_cast<float>(me + 1) * i;
  Tensor shard = Tensor::zeros({static_cast<int64_t>(l.shard_numel)}, DType::f32);
  comm::reduce_scatter(host(), full, shard, ReduceOp::sum, Stream::host());
  comm::all_gather(host(), shard, full, Stream::host());
  comm::all_reduce(host(), full, ReduceOp::avg, Stream::host());  // every rank now holds the same
  const float ranks_sum = static_cast<float>(w * (w + 1) / 2);
  for (size_t i = 0; i < 10; ++i)
    EXPECT_EQ(full.data_as<float>()[i], ranks_sum * i) << i;
  Tensor b = Tensor::from_ints({me, me}, {2}, DType::i64);
  comm::broadcast(host(), b, 1, Stream::host());
  EXPECT_EQ(b.to_ints(), (std::vector<int64_t>{1, 1}));
}

TEST(MpiCollectives, ArgumentErrors) {
  int32_t x = 1;
  EXPECT_THROW(host().all_reduce(&x, &x, 1, DType::i32, ReduceOp::avg, Stream::host()), DTypeError);
  EXPECT_THROW(host().broadcast(&x, 1, DType::i32, host().size(), Stream::host()), ValueError);
  EXPECT_THROW(host().all_gather(&x, &x, 1, DType::i32, Stream{Device::cuda(0), nullptr}),
               DeviceError);
}

}  // namespace
}  // namespace zt::test
