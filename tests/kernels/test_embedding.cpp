// CPU token embedding: lookup copies rows exactly (f32/f16/bf16, i32/i64 ids, odd widths); an
// out-of-range id throws ValueError naming it; the gradient against the float64 reference
// (reference_embedding.h) with heavily repeated ids, against finite differences, and bit for bit
// against the summation order of kernels/embedding_order.h; argument errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "kernels/reference_embedding.h"
#include "support/test_util.h"
#include "zerotrain/kernels/embedding.h"
#include "zerotrain/kernels/embedding_order.h"

namespace zt {
namespace {

using kernels::embedding_backward;
using kernels::embedding_forward;

constexpr DType kDTypes[] = {DType::f32, DType::f16, DType::bf16};

template <typename E, typename Fn>
void expect_error(Fn&& fn, const std::vector<std::string>& parts) {
  try {
    fn();
    ADD_FAILURE() << "expected an exception";
  } catch (const E& e) {
    for (const auto& p : parts)
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

TEST(EmbeddingCpu, ForwardCopiesRows) {
  for (DType dt : kDTypes) {
    for (int64_t c : {1, 33, 4096}) {
      for (DType it : {DType::i32, DType::i64}) {
        const int64_t v = 50, n = 37;
        Tensor table = test::random_tensor({v, c}, dt, 1 + c);
        const auto idv = test::repeated_ids(n, v, 2 + c);
        Tensor ids = Tensor::from_ints(idv, {n}, it), out = Tensor::empty({n, c}, dt);
        embedding_forward(ids, table, out);
        const auto tf = table.to_floats(), of = out.to_floats();
        for (int64_t t = 0; t < n; ++t)
          for (int64_t j = 0; j < c; ++j)
            ASSERT_EQ(of[static_cast<size_t>(t * c + j)],
                      tf[static_cast<size_t>(idv[static_cast<size_t>(t)] * c + j)])
                << dtype_name(dt) << " c " << c << " token " << t;
      }
    }
  }
}

TEST(EmbeddingCpu, OutOfRangeIdThrowsNamingIt) {
  const int64_t v = 10, c = 4;
  Tensor table = test::random_tensor({v, c}, DType::f32, 11);
  for (auto [bad_id, where] :
       {std::pair<int64_t, int64_t>{300, 2}, std::pair<int64_t, int64_t>{-2, 3}}) {
    std::vector<int64_t> idv = {1, 5, 7, 9};
    idv[static_cast<size_t>(where)] = bad_id;
    Tensor ids = Tensor::from_ints(idv, {4}, DType::i64), out = Tensor::empty({4, c}, DType::f32);
    out.fill(7.0);
    expect_error<ValueError>(
        [&] { embedding_forward(ids, table, out); },
        {"[embedding_forward]", str("ids[", where, "] = ", bad_id), "out of range [0, 10)"});
    const auto of = out.to_floats(), tf = table.to_floats();
    for (int64_t j = 0; j < c; ++j) {
      EXPECT_EQ(of[static_cast<size_t>(where * c + j)], 0.0f) << "bad row is zero-filled";
      EXPECT_EQ(of[static_cast<size_t>(j)], tf[static_cast<size_t>(1 * c + j)])
          << "good rows are copied";
    }
  }
}

TEST(EmbeddingCpu, BackwardMatchesReference) {
  for (DType dt : kDTypes) {
    for (int64_t c : {1, 33, 256}) {
      for (DType gt : {DType::f32, dt}) {
        const int64_t v = 50, n = 300;
        const auto idv = test::repeated_ids(n, v, 21 + c);
        Tensor ids = Tensor::from_ints(idv, {n}, DType::i32);
        Tensor dout = test::random_tensor({n, c}, dt, 22 + c);
        Tensor dtable = test::random_tensor({v, c}, gt, 23 + c);
        const auto ref =
            test::embedding_backward_ref(idv, test::to_doubles(dout), test::to_doubles(dtable), c);
        embedding_backward(ids, dout, dtable);
        const test::Tolerance tol =
            gt == DType::f32 ? test::Tolerance{5e-5, 1e-5} : test::tolerance_for(gt);
        test::expect_close(ref, dtable, tol,
                           str("dtable ", dtype_name(gt), " dout ", dtype_name(dt), " c ", c));
      }
    }
  }
}

// The exact order of kernels/embedding_order.h, written out independently.
std::vector<float> chunked_order_sum(const std::vector<int64_t>& ids,
                                     const std::vector<float>& dout, std::vector<float> dtable,
                                     int64_t c) {
  const int64_t n = static_cast<int64_t>(ids.size()), L = kernels::kEmbeddingGradChunk;
  std::vector<int64_t> order(ids.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return ids[a] < ids[b]; });
  for (int64_t j = 0; j < c; ++j) {
    int64_t p = 0;
    while (p < n) {
      const int64_t id = ids[order[p]];
      float total = 0.0f, piece = 0.0f;
      for (; p < n && ids[order[p]] == id; ++p) {
        piece += dout[static_cast<size_t>(order[p] * c + j)];
        if ((p + 1) % L == 0 || p + 1 == n || ids[order[p + 1]] != id) {
          total += piece;
          piece = 0.0f;
        }
      }
      float& dst = dtable[static_cast<size_t>(id * c + j)];
      dst = dst + total;
    }
  }
  return dtable;
}

TEST(EmbeddingCpu, BackwardFollowsDocumentedOrder) {
  const int64_t v = 30, n = 1000, c = 5;
  const auto idv = test::repeated_ids(n, v, 31);
  Tensor ids = Tensor::from_ints(idv, {n}, DType::i64);
  Tensor dout = test::random_tensor({n, c}, DType::f32, 32);
  Tensor dtable = test::random_tensor({v, c}, DType::f32, 33);
  const auto want = chunked_order_sum(idv, dout.to_floats(), dtable.to_floats(), c);
  embedding_backward(ids, dout, dtable);
  const auto got = dtable.to_floats();
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_EQ(got[i], want[i]) << "element " << i;
}

TEST(EmbeddingCpu, BackwardMatchesFiniteDifferences) {
  const int64_t v = 20, n = 50, c = 7;
  const auto idv = test::repeated_ids(n, v, 41);
  Tensor ids = Tensor::from_ints(idv, {n}, DType::i32);
  Tensor table = test::random_tensor({v, c}, DType::f32, 42);
  Tensor cot = test::random_tensor({n, c}, DType::f32, 43);
  const auto cotd = test::to_doubles(cot);
  auto loss = [&](const std::vector<std::vector<float>>& in) {
    Tensor t = Tensor::from_floats(in[0], {v, c}, DType::f32),
           out = Tensor::empty({n, c}, DType::f32);
    embedding_forward(ids, t, out);
    return test::dot(test::to_doubles(out), cotd);
  };
  Tensor dtable = Tensor::zeros({v, c}, DType::f32);
  embedding_backward(ids, cot, dtable);
  test::expect_gradients_match_fd(loss, {table.to_floats()}, {test::to_doubles(dtable)},
                                  "embedding fd");
}

TEST(EmbeddingCpu, BackwardRejectsOutOfRangeIdAndLeavesTableAlone) {
  Tensor ids = Tensor::from_ints({0, 3, 12, 1}, {4}, DType::i32);
  Tensor dout = test::random_tensor({4, 3}, DType::f32, 51);
  Tensor dtable = test::random_tensor({10, 3}, DType::f32, 52), before = dtable.clone();
  expect_error<ValueError>([&] { embedding_backward(ids, dout, dtable); },
                           {"[embedding_backward]", "ids[2] = 12", "out of range [0, 10)"});
  test::expect_bitwise_equal(before, dtable, "dtable after a rejected backward");
}

TEST(EmbeddingCpu, BadArgumentsThrowTypedErrors) {
  Tensor ids = Tensor::from_ints({0, 1, 2}, {3}, DType::i64);
  Tensor table = test::random_tensor({10, 8}, DType::bf16, 61);
  Tensor out = Tensor::empty({3, 8}, DType::bf16);
  expect_error<ShapeError>(
      [&] {
        Tensor bad = Tensor::empty({3, 7}, DType::bf16);
        embedding_forward(ids, table, bad);
      },
      {"[embedding_forward]", "out bf16[3, 7]", "ids i64[3]", "table bf16[10, 8]"});
  expect_error<DTypeError>(
      [&] {
        Tensor bad = Tensor::empty({3, 8}, DType::f32);
        embedding_forward(ids, table, bad);
      },
      {"[embedding_forward]", "table bf16[10, 8]", "out f32[3, 8]"});
  expect_error<DTypeError>(
      [&] {
        Tensor bad = Tensor::from_floats({0, 1, 2}, {3}, DType::f32);
        embedding_forward(bad, table, out);
      },
      {"[embedding_forward]", "ids f32[3]"});
  expect_error<ShapeError>(
      [&] {
        Tensor bad = Tensor::from_ints({0, 1, 2, 3}, {2, 2}, DType::i64);
        embedding_forward(bad, table, out);
      },
      {"[embedding_forward]", "ids i64[2, 2]"});
  expect_error<DTypeError>(
      [&] {
        Tensor dtable = Tensor::zeros({10, 8}, DType::f16);
        embedding_backward(ids, out, dtable);
      },
      {"[embedding_backward]", "dtable f16[10, 8]", "dout bf16[3, 8]"});
  expect_error<ShapeError>(
      [&] {
        Tensor dtable = Tensor::zeros({10, 9}, DType::f32);
        embedding_backward(ids, out, dtable);
      },
      {"[embedding_backward]", "dout bf16[3, 8]", "dtable f32[10, 9]"});
  std::vector<uint16_t> storage(80);
  Tensor table_gpu = Tensor::wrap(storage.data(), {10, 8}, DType::bf16, Device::cuda(0));
  expect_error<DeviceError>([&] { embedding_forward(ids, table_gpu, out); },
                            {"[embedding_forward]", "on cuda:0", "on cpu"});
}

}  // namespace
}  // namespace zt
