// Gradient reductions in the communication dtype (zero/grad_comm.h) over 2 and 4 MPI ranks: for
// every pair of accumulation and communication dtypes, the all-reduce and the reduce-scatter (into
// a shard and in place) give every element exactly cast_back(rank-ordered f32 sum of the ranks'
// values cast to the communication dtype, rounded once), computed here from every rank's input.
// That both collectives agree element by element is what keeps the ZeRO stages bitwise equal
// ([Note: communication dtype]); the end-to-end cases are in test_zero_parity.cpp. On GPUs (one
// per rank; skipped otherwise) the same reductions through NCCL, which rounds each partial sum in
// its own order, stay within one rounding per rank of those sums.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "mpi/mpi_test_env.h"
#include "zerotrain/core/device.h"
#include "zerotrain/core/half.h"
#include "zerotrain/core/tensor.h"
#include "zerotrain/zero/grad_comm.h"

namespace zt::test {
namespace {

float round_to(float x, DType dtype) {
  if (dtype == DType::bf16) return bf16::to_float(bf16::from_float(x));
  if (dtype == DType::f16) return f16::to_float(f16::from_float(x));
  return x;
}

// Rank r's gradient values: different per rank, with bits below 16-bit precision.
std::vector<float> rank_values(int rank, int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[static_cast<size_t>(i)] = (0.37f * static_cast<float>((i * 7 + rank * 13) % 29) - 5.1f) *
                                (1.0f + static_cast<float>(rank) / 3000.0f) * 1e-3f;
  return v;
}

std::vector<float> expected(int world, int64_t n, DType accum, DType wire) {
  std::vector<float> out(static_cast<size_t>(n));
  std::vector<std::vector<float>> in;
  for (int r = 0; r < world; ++r) {
    in.push_back(rank_values(r, n));
    for (float& x : in.back())
      x = round_to(x, accum);  // what the accumulation buffer holds
  }
  for (size_t i = 0; i < out.size(); ++i) {
    float acc = round_to(in[0][i], wire);
    for (int r = 1; r < world; ++r)
      acc += round_to(in[static_cast<size_t>(r)][i], wire);
    out[i] = round_to(round_to(acc, wire), accum);
  }
  return out;
}

struct Pair {
  DType accum, wire;
};
const Pair kPairs[] = {{DType::f32, DType::f32},  {DType::f32, DType::bf16},
                       {DType::f32, DType::f16},  {DType::bf16, DType::bf16},
                       {DType::bf16, DType::f32}, {DType::bf16, DType::f16}};

TEST(MpiGradComm, AllReduceAndReduceScatterSumInTheCommDtype) {
  comm::Communicator& comm = process_group().host();
  const int w = comm.size(), me = comm.rank();
  const int64_t shard = 1001, n = shard * w;
  for (const Pair& p : kPairs) {
    const std::string what = str(dtype_name(p.accum), " via ", dtype_name(p.wire));
    const std::vector<float> expect = expected(w, n, p.accum, p.wire);
    const std::vector<float> mine = rank_values(me, n);

    Tensor buf = Tensor::from_floats(mine, {n}, p.accum);
    zero::all_reduce_grads(comm, buf, p.wire, Stream::host());
    EXPECT_EQ(buf.to_floats(), expect) << "all-reduce " << what;

    const std::vector<float> own(expect.begin() + me * shard, expect.begin() + (me + 1) * shard);
    Tensor full = Tensor::from_floats(mine, {n}, p.accum);
    Tensor out = Tensor::zeros({shard}, p.accum);
    zero::reduce_scatter_grads(comm, full, out, p.wire, Stream::host());
    EXPECT_EQ(out.to_floats(), own) << "reduce-scatter " << what;
    Tensor in_place = full.slice(0, me * shard, (me + 1) * shard);
    zero::reduce_scatter_grads(comm, full, in_place, p.wire, Stream::host());
    EXPECT_EQ(in_place.to_floats(), own) << "in-place reduce-scatter " << what;
  }
  // The communication dtype matters: summing in bf16 is not summing in f32.
  EXPECT_NE(expected(w, n, DType::f32, DType::bf16), expected(w, n, DType::f32, DType::f32));
}

// Units in the last place of a dtype, relative.
double ulp_of(DType dtype) {
  if (dtype == DType::bf16) return std::ldexp(1.0, -7);
  if (dtype == DType::f16) return std::ldexp(1.0, -10);
  return std::ldexp(1.0, -23);
}

// NCCL adds the ranks along its ring or tree, rounding each partial sum to the communication
// dtype, in an order that differs between all-reduce and reduce-scatter: the stages agree to that
// rounding on GPUs, not bitwise. Bound: W roundings of at most one ulp of the sum of magnitudes,
// plus the cast back into the accumulation dtype.
void expect_within_roundings(const std::vector<float>& got, const std::vector<float>& want,
                             int64_t first, int world, const Pair& p, const std::string& what) {
  ASSERT_LE(got.size() + static_cast<size_t>(first), want.size()) << what;
  const int64_t n = static_cast<int64_t>(want.size());
  std::vector<std::vector<float>> in;
  for (int r = 0; r < world; ++r)
    in.push_back(rank_values(r, n));
  for (size_t i = 0; i < got.size(); ++i) {
    const size_t at = i + static_cast<size_t>(first);
    double magnitude = 0;
    for (int r = 0; r < world; ++r)
      magnitude += std::abs(static_cast<double>(in[static_cast<size_t>(r)][at]));
    const double tol = world * ulp_of(p.wire) * magnitude + ulp_of(p.accum) * std::abs(want[at]);
    if (std::abs(static_cast<double>(got[i]) - want[at]) > tol) {
      ADD_FAILURE() << what << ": element " << at << " is " << got[i] << ", want " << want[at]
                    << " within " << tol;
      return;
    }
  }
}

TEST(MpiGradComm, NcclSumsStayWithinOneRoundingPerRank) {
  comm::ProcessGroup& pg = process_group();
  if (cuda_device_count() < pg.world_size())
    GTEST_SKIP() << "needs one GPU per rank (" << pg.world_size() << ")";
  const std::unique_ptr<comm::Communicator> nccl = pg.make_device_communicator();
  const Device device = pg.local_device();
  const Stream stream = Stream::default_for(device);
  const int w = nccl->size(), me = nccl->rank();
  const int64_t shard = 1 << 16, n = shard * w;
  for (const Pair& p : kPairs) {
    const std::string what = str(dtype_name(p.accum), " via ", dtype_name(p.wire));
    const std::vector<float> want = expected(w, n, p.accum, p.wire);
    const Tensor mine = Tensor::from_floats(rank_values(me, n), {n}, p.accum).to(device, stream);
    const Tensor buf = mine.clone(stream);
    zero::all_reduce_grads(*nccl, buf, p.wire, stream);
    expect_within_roundings(buf.to_floats(stream), want, 0, w, p, "all-reduce " + what);
    const Tensor full = mine.clone(stream);
    const Tensor out = Tensor::zeros({shard}, p.accum, device, stream);
    zero::reduce_scatter_grads(*nccl, full, out, p.wire, stream);
    expect_within_roundings(out.to_floats(stream), want, me * shard, w, p,
                            "reduce-scatter " + what);
  }
}

}  // namespace
}  // namespace zt::test
