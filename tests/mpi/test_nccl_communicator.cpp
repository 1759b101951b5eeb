// The NCCL backend on GPUs (run by the lead on the GPU machine: mpirun -n 2|4 comm_mpi_tests, or
// `zerotrain launch -n 2 -- comm_mpi_tests` for the TCP bootstrap): every collective and dtype
// against the same rank-seeded expectations as the MPI tests. Skips without enough GPUs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "mpi/collective_data.h"
#include "mpi/mpi_test_env.h"
#include "zerotrain/comm/shard_layout.h"
#include "zerotrain/core/error.h"
#include "zerotrain/core/stream.h"
#include "zerotrain/core/tensor.h"

namespace zt::test {
namespace {

using comm::ReduceOp;

class NcclCommunicatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() < process_group().world_size())
      GTEST_SKIP() << "needs one GPU per rank (" << process_group().world_size() << ")";
    comm_ = process_group().make_device_communicator();
  }
  // Bytes -> a device tensor of n elements; and back.
  Tensor to_device(const std::vector<uint8_t>& bytes, DType t, size_t n) {
    Tensor d = Tensor::empty({static_cast<int64_t>(n)}, t, process_group().local_device());
    copy_bytes(d.data(), d.device(), bytes.data(), Device::cpu(), bytes.size(), stream());
    return d;
  }
  std::vector<uint8_t> to_host(const Tensor& d) {
    std::vector<uint8_t> b(d.nbytes());
    copy_bytes(b.data(), Device::cpu(), d.data(), d.device(), b.size(), stream());
    synchronize(stream());
    return b;
  }
  Stream stream() { return Stream::default_for(process_group().local_device()); }
  std::unique_ptr<comm::Communicator> comm_;
};

const DType kDTypes[] = {DType::f32, DType::bf16, DType::f16, DType::i32, DType::i64, DType::u8};

// NCCL reduces along its ring, not in rank order, rounding each partial sum to the buffer's dtype:
// f32 and integer results are exact for these inputs (collective_data.h) and compared bytewise;
// bf16 and f16 sums of more than two ranks may differ from the once-rounded exact sum by a
// rounding per extra addition, so they are compared to (world - 1) units in the last place.
void expect_reduction(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want, DType t,
                      int world, const std::string& what) {
  if (t != DType::bf16 && t != DType::f16) {
    EXPECT_EQ(got, want) << what;
    return;
  }
  ASSERT_EQ(got.size(), want.size()) << what;
  const double ulp = t == DType::bf16 ? std::ldexp(1.0, -7) : std::ldexp(1.0, -10);
  const size_t n = got.size() / dtype_size(t);
  for (size_t i = 0; i < n; ++i) {
    const double g = load_as_float(got.data(), t, i), w = load_as_float(want.data(), t, i);
    const double tol = (world - 1) * ulp * std::max(1.0, std::abs(w));
    if (std::abs(g - w) > tol) {
      ADD_FAILURE() << what << ": element " << i << " is " << g << ", want " << w;
      return;
    }
  }
}

TEST_F(NcclCommunicatorTest, AllReduceEveryDtype) {
  const int w = comm_->size(), me = comm_->rank();
  EXPECT_EQ(comm_->backend_name(), "nccl");
  for (DType t : kDTypes)
    for (size_t n : {size_t{1}, size_t{1001}, size_t{1} << 20}) {
      Tensor d = to_device(rank_input(t, me, n), t, n);
      comm_->all_reduce(d.data(), d.data(), n, t, ReduceOp::sum, stream());
      expect_reduction(to_host(d), expected_reduction(t, w, n, false), t, w,
                       str(dtype_name(t), " n=", n));
      if (!is_floating(t)) continue;
      Tensor a = to_device(rank_input(t, me, n), t, n);
      comm_->all_reduce(a.data(), a.data(), n, t, ReduceOp::avg, stream());
      expect_reduction(to_host(a), expected_reduction(t, w, n, true), t, w,
                       str("avg ", dtype_name(t)));
    }
}

TEST_F(NcclCommunicatorTest, ReduceScatterAndAllGatherPaddedUneven) {
  const int w = comm_->size(), me = comm_->rank();
  for (DType t : kDTypes) {
    const size_t n = 4099, es = dtype_size(t);
    comm::ShardLayout l = comm::shard_layout(n, w);
    auto in = rank_input(t, me, n);
    in.resize(l.padded_numel * es, 0);
    Tensor full = to_device(in, t, l.padded_numel);
    Tensor shard = Tensor::zeros({static_cast<int64_t>(l.shard_numel)}, t, full.device());
    comm_->reduce_scatter(full.data(), shard.data(), l.shard_numel, t, ReduceOp::sum, stream());
    auto want = expected_reduction(t, w, n, false);
    want.resize(l.padded_numel * es, 0);
    std::vector<uint8_t> want_shard(
        want.begin() + static_cast<ptrdiff_t>(l.offset(me) * es),
        want.begin() + static_cast<ptrdiff_t>((l.offset(me) + l.shard_numel) * es));
    expect_reduction(to_host(shard), want_shard, t, w, str("reduce_scatter ", dtype_name(t)));
    Tensor gathered = Tensor::zeros({static_cast<int64_t>(l.padded_numel)}, t, full.device());
    comm_->all_gather(shard.data(), gathered.data(), l.shard_numel, t, stream());
    expect_reduction(to_host(gathered), want, t, w, str("all_gather ", dtype_name(t)));
  }
}

TEST_F(NcclCommunicatorTest, BroadcastBarrierSplit) {
  const int w = comm_->size(), me = comm_->rank();
  Tensor b = to_device(rank_input(DType::i64, me, 77), DType::i64, 77);
  comm_->broadcast(b.data(), 77, DType::i64, w - 1, stream());
  EXPECT_EQ(to_host(b), rank_input(DType::i64, w - 1, 77));
  comm_->barrier();
  auto sub = comm_->split(me % 2, me);
  ASSERT_NE(sub, nullptr);
  EXPECT_EQ(sub->size(), (w + 1 - me % 2) / 2);
  Tensor one =
      to_device(make_buffer(DType::i32, 1, [&](size_t) { return 1.0 + me; }), DType::i32, 1);
  sub->all_reduce(one.data(), one.data(), 1, DType::i32, ReduceOp::sum, stream());
  int64_t want = 0;
  for (int r = me % 2; r < w; r += 2)
    want += 1 + r;
  EXPECT_EQ(to_host(one), make_buffer(DType::i32, 1, [&](size_t) { return double(want); }));
}

TEST_F(NcclCommunicatorTest, WrongStreamIsRejected) {
  float x = 0;
  EXPECT_THROW(comm_->all_reduce(&x, &x, 1, DType::f32, ReduceOp::sum, Stream::host()),
               DeviceError);
}

}  // namespace
}  // namespace zt::test
