// CPU attention over packed rows (AttentionOptions::doc_starts, [Note: packed documents] in
// nn/row_documents.h): forward and gradients against the float64 reference with document
// boundaries (with and without a sliding window), finite differences, every document of a packed
// row bitwise equal to the same document run as a row of its own, doc_starts of one document per
// row bitwise equal to none, and the argument checks. CUDA: test_attention_packed_cuda.cpp.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "kernels/reference_attention.h"
#include "support/test_util.h"
#include "zerotrain/core/error.h"
#include "zerotrain/kernels/attention.h"

namespace zt {
namespace {

using kernels::AttentionOptions;

struct Result {
  Tensor out, lse, dq, dk, dv;
};

Result run(const test::AttentionInputs& p, const AttentionOptions& opt) {
  Result r;
  r.out = Tensor::empty(p.q.shape(), p.q.dtype());
  r.lse = Tensor::empty({p.q.size(0), p.q.size(2), p.q.size(1)}, DType::f32);
  kernels::attention_forward(p.q, p.k, p.v, r.out, r.lse, opt);
  r.dq = Tensor::empty(p.q.shape(), p.q.dtype());
  r.dk = Tensor::empty(p.k.shape(), p.k.dtype());
  r.dv = Tensor::empty(p.v.shape(), p.v.dtype());
  kernels::attention_backward(p.q, p.k, p.v, r.out, r.lse, p.dout, r.dq, r.dk, r.dv, opt);
  return r;
}

Tensor doc_starts_tensor(const std::vector<int64_t>& starts, int64_t B, int64_t S) {
  return Tensor::from_ints(starts, {B, S}, DType::i32);
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

// Positions [first, first + n) of row b of a [B, S, H, D] tensor, as a [1, n, H, D] tensor.
Tensor rows_of(const Tensor& t, int64_t b, int64_t first, int64_t n) {
  return t.select(0, b).slice(0, first, first + n).contiguous().view(
      {1, n, t.size(2), t.size(3)});
}

TEST(AttentionPackedCpu, MatchesReferenceWithDocumentBoundaries) {
  const std::vector<std::vector<int64_t>> lengths = {{10, 1, 20, 6}, {37}, {4, 33}};
  const std::vector<int64_t> starts = test::packed_doc_starts(lengths);
  for (DType dt : {DType::f32, DType::bf16})
    for (int64_t window : {0, 5}) {
      test::AttentionInputs p = test::attention_inputs(3, 37, 4, 2, 16, window, dt, 300 + window);
      p.shape.doc_starts = starts;
      AttentionOptions opt;
      opt.window = window;
      opt.doc_starts = doc_starts_tensor(starts, 3, 37);
      const Result r = run(p, opt);
      const test::AttentionRef ref =
          test::attention_reference(p.shape, test::to_doubles(p.q), test::to_doubles(p.k),
                                    test::to_doubles(p.v), test::to_doubles(p.dout));
      const test::Tolerance out_tol =
          dt == DType::f32 ? test::Tolerance{2e-6, 2e-5} : test::Tolerance{4e-3, 8e-3};
      const test::Tolerance grad_tol =
          dt == DType::f32 ? test::Tolerance{1e-5, 1e-4} : test::Tolerance{8e-3, 1.6e-2};
      const std::string what = str(dtype_name(dt), " window=", window);
      test::expect_close(ref.out, r.out, out_tol, "out " + what);
      test::expect_close(ref.lse, r.lse, {1e-5, 1e-5}, "lse " + what);
      test::expect_close(ref.dq, r.dq, grad_tol, "dq " + what);
      test::expect_close(ref.dk, r.dk, grad_tol, "dk " + what);
      test::expect_close(ref.dv, r.dv, grad_tol, "dv " + what);
      // The boundaries matter: without them the first row's later documents come out otherwise.
      const Result unpacked = run(p, {0.0f, window});
      EXPECT_FALSE(same_bytes(unpacked.out, r.out)) << what;
    }
}

TEST(AttentionPackedCpu, EachDocumentEqualsItsOwnRowBitwise) {
  const std::vector<int64_t> lengths = {7, 1, 12, 4};
  const int64_t S = 24;
  for (int64_t window : {0, 3}) {
    const test::AttentionInputs p = test::attention_inputs(1, S, 4, 2, 8, window, DType::f32, 41);
    AttentionOptions opt;
    opt.window = window;
    opt.doc_starts = doc_starts_tensor(test::packed_doc_starts({lengths}), 1, S);
    const Result packed = run(p, opt);
    int64_t first = 0;
    for (int64_t n : lengths) {
      test::AttentionInputs alone;
      alone.q = rows_of(p.q, 0, first, n);
      alone.k = rows_of(p.k, 0, first, n);
      alone.v = rows_of(p.v, 0, first, n);
      alone.dout = rows_of(p.dout, 0, first, n);
      const Result own = run(alone, {0.0f, window});
      const std::string what = str("document at ", first, " of ", n, " window=", window);
      EXPECT_TRUE(same_bytes(own.out, rows_of(packed.out, 0, first, n))) << what;
      EXPECT_TRUE(same_bytes(own.dq, rows_of(packed.dq, 0, first, n))) << what;
      EXPECT_TRUE(same_bytes(own.dk, rows_of(packed.dk, 0, first, n))) << what;
      EXPECT_TRUE(same_bytes(own.dv, rows_of(packed.dv, 0, first, n))) << what;
      const Tensor lse_rows = packed.lse.select(0, 0).slice(1, first, first + n).contiguous();
      EXPECT_TRUE(same_bytes(own.lse.select(0, 0).contiguous(), lse_rows)) << what;
      first += n;
    }
  }
}

TEST(AttentionPackedCpu, OneDocumentPerRowIsBitwiseTheUnpackedRun) {
  const test::AttentionInputs p = test::attention_inputs(2, 19, 4, 4, 8, 0, DType::bf16, 9);
  AttentionOptions opt;
  opt.doc_starts = doc_starts_tensor(std::vector<int64_t>(2 * 19, 0), 2, 19);
  const Result packed = run(p, opt), plain = run(p, {});
  EXPECT_TRUE(same_bytes(packed.out, plain.out));
  EXPECT_TRUE(same_bytes(packed.lse, plain.lse));
  EXPECT_TRUE(same_bytes(packed.dq, plain.dq));
  EXPECT_TRUE(same_bytes(packed.dk, plain.dk));
  EXPECT_TRUE(same_bytes(packed.dv, plain.dv));
}

TEST(AttentionPackedCpu, GradientsMatchFiniteDifferences) {
  const std::vector<int64_t> starts = test::packed_doc_starts({{3, 5}, {1, 2, 5}});
  for (int64_t window : {0, 3}) {
    test::AttentionInputs p = test::attention_inputs(2, 8, 4, 2, 8, window, DType::f32, 17);
    AttentionOptions opt;
    opt.window = window;
    opt.doc_starts = doc_starts_tensor(starts, 2, 8);
    const std::vector<float> cot = p.dout.to_floats();
    auto loss = [&](const std::vector<std::vector<float>>& x) {
      test::AttentionInputs moved = p;
      moved.q = Tensor::from_floats(x[0], p.q.shape(), DType::f32);
      moved.k = Tensor::from_floats(x[1], p.k.shape(), DType::f32);
      moved.v = Tensor::from_floats(x[2], p.v.shape(), DType::f32);
      Tensor out = Tensor::empty(p.q.shape(), DType::f32), lse = Tensor::empty({2, 4, 8}, DType::f32);
      kernels::attention_forward(moved.q, moved.k, moved.v, out, lse, opt);
      std::vector<double> o = test::to_doubles(out), c(cot.begin(), cot.end());
      return test::dot(o, c);
    };
    const Result r = run(p, opt);
    test::expect_gradients_match_fd(
        loss, {p.q.to_floats(), p.k.to_floats(), p.v.to_floats()},
        {test::to_doubles(r.dq), test::to_doubles(r.dk), test::to_doubles(r.dv)},
        str("packed attention window=", window), 1e-2, 1e-2, 8);
  }
}

TEST(AttentionPackedCpu, BadDocStartsAreRefused) {
  const test::AttentionInputs p = test::attention_inputs(1, 4, 2, 2, 8, 0, DType::f32, 3);
  auto refused = [&](const Tensor& starts, const std::string& part) {
    AttentionOptions opt;
    opt.doc_starts = starts;
    try {
      run(p, opt);
      ADD_FAILURE() << "accepted " << part;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  refused(Tensor::from_ints({0, 0, 0, 0}, {1, 4}, DType::i64), "doc_starts");
  refused(Tensor::from_ints({0, 0, 0}, {1, 3}, DType::i32), "doc_starts");
  refused(Tensor::from_ints({0, 0, 3, 2}, {1, 4}, DType::i32), "doc_starts[0, 2] = 3");
  refused(Tensor::from_ints({0, -1, 0, 0}, {1, 4}, DType::i32), "doc_starts[0, 1] = -1");
}

}  // namespace
}  // namespace zt
