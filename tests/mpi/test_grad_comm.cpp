// Gradient reductions in the communication dtype (zero/grad_comm.h) over 2 and 4 MPI ranks: for
// every pair of accumulation and communication dtypes, the all-reduce and the reduce-scatter (into
// a shard and in place) give every element exactly cast_back(rank-ordered f32 sum of the ranks'
// values cast to the communication dtype, rounded once), computed here from every rank's input.
// That both collectives agree element by element is what keeps the ZeRO stages bitwise equal
// ([Note: communication dtype]); the end-to-end cases are in test_zero_parity.cpp.
#include <gtest/gtest.h>

#include <vector>

#include "mpi/mpi_test_env.h"
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

}  // namespace
}  // namespace zt::test
