// CPU RMSNorm and LayerNorm: forward and backward against the float64 reference
// (reference_norm.h) for f32/f16/bf16 and odd widths, backward against finite differences, the
// Hugging Face rounding order, accumulation, thread-count independence and argument errors.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/reference_norm.h"
#include "support/test_util.h"
#include "zerotrain/kernels/norm.h"

namespace zt {
namespace {

using kernels::layernorm_backward;
using kernels::layernorm_forward;
using kernels::rmsnorm_backward;
using kernels::rmsnorm_forward;

constexpr float kEps = 1e-5f;
constexpr DType kDTypes[] = {DType::f32, DType::f16, DType::bf16};
constexpr int64_t kWidths[] = {1, 33, 1000, 2048, 4096};

std::string label(const char* what, DType dt, int64_t n, int64_t c) {
  return str(what, " ", dtype_name(dt), " [", n, ", ", c, "]");
}

// Expects fn to throw E whose message contains every one of `parts`.
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

TEST(NormCpu, RmsForwardMatchesReference) {
  for (DType dt : kDTypes) {
    for (int64_t c : kWidths) {
      const int64_t n = c >= 2048 ? 3 : 6;
      Tensor x = test::random_tensor({n, c}, dt, 1 + c);
      Tensor w = test::random_tensor({c}, dt, 2 + c, 0.5f, 1.5f);
      Tensor y = Tensor::empty({n, c}, dt), rstd = Tensor::empty({n}, DType::f32);
      rmsnorm_forward(x, w, y, rstd, kEps);
      auto ref =
          test::norm_forward_ref(true, test::to_doubles(x), test::to_doubles(w), {}, n, c, kEps);
      test::expect_close(ref.y, y, test::tolerance_for(dt), label("rms y", dt, n, c));
      test::expect_close(ref.rstd, rstd, {1e-6, 1e-6}, label("rms rstd", dt, n, c));
    }
  }
}

TEST(NormCpu, LayerForwardMatchesReference) {
  for (DType dt : kDTypes) {
    for (int64_t c : kWidths) {
      for (bool bias : {true, false}) {
        const int64_t n = c >= 2048 ? 3 : 6;
        Tensor x = test::random_tensor({n, c}, dt, 3 + c, -1.0f, 2.0f);
        Tensor w = test::random_tensor({c}, dt, 4 + c, 0.5f, 1.5f);
        Tensor b = bias ? test::random_tensor({c}, dt, 5 + c) : Tensor();
        Tensor y = Tensor::empty({n, c}, dt);
        Tensor mean = Tensor::empty({n}, DType::f32), rstd = Tensor::empty({n}, DType::f32);
        layernorm_forward(x, w, b, y, mean, rstd, kEps);
        auto ref =
            test::norm_forward_ref(false, test::to_doubles(x), test::to_doubles(w),
                                   bias ? test::to_doubles(b) : std::vector<double>{}, n, c, kEps);
        const std::string what = label(bias ? "ln y" : "ln y (no bias)", dt, n, c);
        test::expect_close(ref.y, y, test::tolerance_for(dt), what);
        test::expect_close(ref.mean, mean, {1e-6, 1e-6}, what + " mean");
        test::expect_close(ref.rstd, rstd, {1e-5, 1e-5}, what + " rstd");
      }
    }
  }
}

TEST(NormCpu, MixedWeightDtypes) {
  // bf16 activations with f32 weights, and f32 activations with bf16 weights.
  const int64_t n = 4, c = 96;
  for (auto [xt, wt] : {std::pair{DType::bf16, DType::f32}, std::pair{DType::f32, DType::bf16}}) {
    Tensor x = test::random_tensor({n, c}, xt, 11);
    Tensor w = test::random_tensor({c}, wt, 12, 0.5f, 1.5f);
    Tensor y = Tensor::empty({n, c}, xt), rstd = Tensor::empty({n}, DType::f32);
    rmsnorm_forward(x, w, y, rstd, kEps);
    auto ref =
        test::norm_forward_ref(true, test::to_doubles(x), test::to_doubles(w), {}, n, c, kEps);
    test::expect_close(ref.y, y, test::tolerance_for(xt), label("rms mixed", xt, n, c));
  }
}

// HF LlamaRMSNorm: weight * (x * rstd).to(bf16), i.e. two roundings, not one.
TEST(NormCpu, RmsBf16FollowsHuggingFaceRoundingOrder) {
  const int64_t n = 8, c = 512;
  Tensor x = test::random_tensor({n, c}, DType::bf16, 21, -3.0f, 3.0f);
  Tensor w = test::random_tensor({c}, DType::bf16, 22, 0.5f, 1.5f);
  Tensor y = Tensor::empty({n, c}, DType::bf16), rstd = Tensor::empty({n}, DType::f32);
  rmsnorm_forward(x, w, y, rstd, kEps);
  const auto xs = x.to_floats(), ws = w.to_floats(), ys = y.to_floats(), rs = rstd.to_floats();
  size_t single_rounding_differs = 0;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < c; ++j) {
      const size_t k = static_cast<size_t>(i * c + j);
      const float r = rs[static_cast<size_t>(i)], wv = ws[static_cast<size_t>(j)];
      const float hf = static_cast<float>(bf16(wv * static_cast<float>(bf16(xs[k] * r))));
      ASSERT_EQ(ys[k], hf) << "element " << k;
      if (static_cast<float>(bf16(wv * (xs[k] * r))) != hf) ++single_rounding_differs;
    }
  }
  EXPECT_GT(single_rounding_differs, 0u) << "the test cannot tell the two orders apart";
}

// Runs the backward of `rms` or LayerNorm (with bias) on host tensors of dtype dt.
struct BackwardRun {
  Tensor dx, dw, db;
};

BackwardRun run_backward(bool rms, const Tensor& x, const Tensor& w, const Tensor& b,
                         const Tensor& dy, DType grad_dtype) {
  const int64_t n = x.size(0), c = x.size(1);
  Tensor y = Tensor::empty({n, c}, x.dtype()), mean = Tensor::empty({n}, DType::f32);
  Tensor rstd = Tensor::empty({n}, DType::f32);
  BackwardRun r{Tensor::empty({n, c}, x.dtype()), Tensor::empty({c}, grad_dtype),
                rms ? Tensor() : Tensor::empty({c}, grad_dtype)};
  if (rms) {
    rmsnorm_forward(x, w, y, rstd, kEps);
    rmsnorm_backward(x, w, rstd, dy, r.dx, r.dw);
  } else {
    layernorm_forward(x, w, b, y, mean, rstd, kEps);
    layernorm_backward(x, w, mean, rstd, dy, r.dx, r.dw, r.db);
  }
  return r;
}

TEST(NormCpu, BackwardMatchesReference) {
  for (bool rms : {true, false}) {
    for (DType dt : kDTypes) {
      for (int64_t c : kWidths) {
        const int64_t n = c >= 2048 ? 3 : 7;
        Tensor x = test::random_tensor({n, c}, dt, 31 + c);
        Tensor w = test::random_tensor({c}, dt, 32 + c, 0.5f, 1.5f);
        Tensor b = test::random_tensor({c}, dt, 33 + c);
        Tensor dy = test::random_tensor({n, c}, dt, 34 + c);
        for (DType gt : {DType::f32, dt}) {
          BackwardRun r = run_backward(rms, x, w, b, dy, gt);
          auto ref = test::norm_backward_ref(rms, test::to_doubles(x), test::to_doubles(w),
                                             test::to_doubles(dy), n, c, kEps);
          const std::string what = label(rms ? "rms bwd" : "ln bwd", dt, n, c);
          test::expect_close(ref.dx, r.dx, test::tolerance_for(dt), what + " dx");
          const test::Tolerance gtol =
              gt == DType::f32 ? test::Tolerance{1e-5, 1e-5} : test::tolerance_for(gt);
          test::expect_close(ref.dw, r.dw, gtol, what + " dw");
          if (!rms) test::expect_close(ref.db, r.db, gtol, what + " db");
        }
      }
    }
  }
}

TEST(NormCpu, BackwardMatchesFiniteDifferences) {
  for (bool rms : {true, false}) {
    for (int64_t c : {1, 33, 257}) {
      const int64_t n = 3;
      const float eps = 1e-2f;  // keeps the function smooth for c = 1
      Tensor x = test::random_tensor({n, c}, DType::f32, 41 + c);
      Tensor w = test::random_tensor({c}, DType::f32, 42 + c, 0.5f, 1.5f);
      Tensor b = test::random_tensor({c}, DType::f32, 43 + c);
      Tensor cot = test::random_tensor({n, c}, DType::f32, 44 + c);
      const std::vector<double> cotd = test::to_doubles(cot);
      auto loss = [&](const std::vector<std::vector<float>>& in) {
        Tensor xi = Tensor::from_floats(in[0], {n, c}, DType::f32);
        Tensor wi = Tensor::from_floats(in[1], {c}, DType::f32);
        Tensor y = Tensor::empty({n, c}, DType::f32), rstd = Tensor::empty({n}, DType::f32);
        if (rms) {
          rmsnorm_forward(xi, wi, y, rstd, eps);
        } else {
          Tensor bi = Tensor::from_floats(in[2], {c}, DType::f32),
                 mean = Tensor::empty({n}, DType::f32);
          layernorm_forward(xi, wi, bi, y, mean, rstd, eps);
        }
        return test::dot(test::to_doubles(y), cotd);
      };
      Tensor y = Tensor::empty({n, c}, DType::f32), mean = Tensor::empty({n}, DType::f32);
      Tensor rstd = Tensor::empty({n}, DType::f32), dx = Tensor::empty({n, c}, DType::f32);
      Tensor dw = Tensor::empty({c}, DType::f32), db = Tensor::empty({c}, DType::f32);
      std::vector<std::vector<float>> inputs = {x.to_floats(), w.to_floats()};
      std::vector<std::vector<double>> grads;
      if (rms) {
        rmsnorm_forward(x, w, y, rstd, eps);
        rmsnorm_backward(x, w, rstd, cot, dx, dw);
        grads = {test::to_doubles(dx), test::to_doubles(dw)};
      } else {
        layernorm_forward(x, w, b, y, mean, rstd, eps);
        layernorm_backward(x, w, mean, rstd, cot, dx, dw, db);
        inputs.push_back(b.to_floats());
        grads = {test::to_doubles(dx), test::to_doubles(dw), test::to_doubles(db)};
      }
      test::expect_gradients_match_fd(loss, inputs, grads,
                                      label(rms ? "rms fd" : "ln fd", DType::f32, n, c));
    }
  }
}

TEST(NormCpu, BackwardAccumulates) {
  const int64_t n = 5, c = 70;
  for (DType gt : {DType::f32, DType::bf16}) {
    Tensor x = test::random_tensor({n, c}, DType::bf16, 51);
    Tensor w = test::random_tensor({c}, DType::bf16, 52, 0.5f, 1.5f);
    Tensor b = test::random_tensor({c}, DType::bf16, 53);
    Tensor dy = test::random_tensor({n, c}, DType::bf16, 54);
    Tensor y = Tensor::empty({n, c}, DType::bf16), dx = Tensor::empty({n, c}, DType::bf16);
    Tensor mean = Tensor::empty({n}, DType::f32), rstd = Tensor::empty({n}, DType::f32);
    Tensor dw = test::random_tensor({c}, gt, 55), db = test::random_tensor({c}, gt, 56);
    const auto dw0 = test::to_doubles(dw), db0 = test::to_doubles(db);
    layernorm_forward(x, w, b, y, mean, rstd, kEps);
    layernorm_backward(x, w, mean, rstd, dy, dx, dw, db, /*accumulate=*/true);
    auto ref = test::norm_backward_ref(false, test::to_doubles(x), test::to_doubles(w),
                                       test::to_doubles(dy), n, c, kEps);
    for (size_t i = 0; i < ref.dw.size(); ++i) {
      ref.dw[i] += dw0[i];
      ref.db[i] += db0[i];
    }
    const test::Tolerance tol =
        gt == DType::f32 ? test::Tolerance{1e-5, 1e-5} : test::tolerance_for(gt);
    test::expect_close(ref.dw, dw, tol, str("ln dw accumulate ", dtype_name(gt)));
    test::expect_close(ref.db, db, tol, str("ln db accumulate ", dtype_name(gt)));
    // RMSNorm into the same buffers, accumulating again.
    const auto dw1 = test::to_doubles(dw);
    rmsnorm_forward(x, w, y, rstd, kEps);
    rmsnorm_backward(x, w, rstd, dy, dx, dw, /*accumulate=*/true);
    auto rref = test::norm_backward_ref(true, test::to_doubles(x), test::to_doubles(w),
                                        test::to_doubles(dy), n, c, kEps);
    for (size_t i = 0; i < rref.dw.size(); ++i)
      rref.dw[i] += dw1[i];
    test::expect_close(rref.dw, dw, tol, str("rms dw accumulate ", dtype_name(gt)));
  }
}

TEST(NormCpu, EmptyBatchZeroesOrKeepsGradients) {
  const int64_t c = 9;
  Tensor x = Tensor::empty({0, c}, DType::f32), dy = Tensor::empty({0, c}, DType::f32);
  Tensor dx = Tensor::empty({0, c}, DType::f32), rstd = Tensor::empty({0}, DType::f32);
  Tensor w = test::random_tensor({c}, DType::f32, 61);
  Tensor dw = test::random_tensor({c}, DType::f32, 62);
  const auto before = test::to_doubles(dw);
  rmsnorm_backward(x, w, rstd, dy, dx, dw, /*accumulate=*/true);
  test::expect_close(before, dw, {0, 0}, "accumulate over no rows");
  rmsnorm_backward(x, w, rstd, dy, dx, dw, /*accumulate=*/false);
  test::expect_close(std::vector<double>(c, 0.0), dw, {0, 0}, "overwrite over no rows");
}

TEST(NormCpu, ResultsDoNotDependOnThreadCount) {
  const int64_t n = 300, c = 1000;
  Tensor x = test::random_tensor({n, c}, DType::f32, 71);
  Tensor w = test::random_tensor({c}, DType::f32, 72);
  Tensor b = test::random_tensor({c}, DType::f32, 73);
  Tensor dy = test::random_tensor({n, c}, DType::f32, 74);
  const int threads = omp_get_max_threads();
  BackwardRun many = run_backward(false, x, w, b, dy, DType::f32);
  omp_set_num_threads(1);
  BackwardRun one = run_backward(false, x, w, b, dy, DType::f32);
  omp_set_num_threads(3);
  BackwardRun three = run_backward(false, x, w, b, dy, DType::f32);
  omp_set_num_threads(threads);
  for (const BackwardRun* r : {&one, &three}) {
    test::expect_bitwise_equal(many.dx, r->dx, "dx");
    test::expect_bitwise_equal(many.dw, r->dw, "dw");
    test::expect_bitwise_equal(many.db, r->db, "db");
  }
}

TEST(NormCpu, InPlaceBackwardMatches) {
  // dx may be dy's own memory.
  const int64_t n = 4, c = 40;
  Tensor x = test::random_tensor({n, c}, DType::f32, 81);
  Tensor w = test::random_tensor({c}, DType::f32, 82);
  Tensor b = test::random_tensor({c}, DType::f32, 83);
  Tensor dy = test::random_tensor({n, c}, DType::f32, 84);
  BackwardRun ref = run_backward(false, x, w, b, dy, DType::f32);
  Tensor y = Tensor::empty({n, c}, DType::f32), mean = Tensor::empty({n}, DType::f32);
  Tensor rstd = Tensor::empty({n}, DType::f32), dw = Tensor::empty({c}, DType::f32);
  Tensor db = Tensor::empty({c}, DType::f32), g = dy.clone();
  layernorm_forward(x, w, b, y, mean, rstd, kEps);
  layernorm_backward(x, w, mean, rstd, g, g, dw, db);
  test::expect_bitwise_equal(ref.dx, g, "in-place dx");
  test::expect_bitwise_equal(ref.dw, dw, "in-place dw");
}

TEST(NormCpu, BadArgumentsThrowTypedErrors) {
  Tensor x = test::random_tensor({4, 8}, DType::bf16, 91);
  Tensor w = test::random_tensor({8}, DType::bf16, 92);
  Tensor y = Tensor::empty({4, 8}, DType::bf16), rstd = Tensor::empty({4}, DType::f32);
  Tensor mean = Tensor::empty({4}, DType::f32);
  expect_error<ShapeError>(
      [&] {
        Tensor bad = Tensor::empty({4, 9}, DType::bf16);
        rmsnorm_forward(x, w, bad, rstd, kEps);
      },
      {"[rmsnorm_forward]", "bf16[4, 8]", "bf16[4, 9]"});
  expect_error<ShapeError>(
      [&] {
        Tensor bad = Tensor::empty({7}, DType::bf16);
        rmsnorm_forward(x, bad, y, rstd, kEps);
      },
      {"[rmsnorm_forward]", "w bf16[7]", "x bf16[4, 8]"});
  expect_error<ShapeError>(
      [&] {
        Tensor bad = Tensor::empty({5}, DType::f32);
        layernorm_forward(x, w, w, y, mean, bad, kEps);
      },
      {"[layernorm_forward]", "rstd f32[5]", "x bf16[4, 8]"});
  expect_error<DTypeError>(
      [&] {
        Tensor bad = Tensor::empty({4, 8}, DType::f16);
        rmsnorm_forward(x, w, bad, rstd, kEps);
      },
      {"[rmsnorm_forward]", "bf16[4, 8]", "f16[4, 8]"});
  expect_error<DTypeError>(
      [&] {
        Tensor bad = Tensor::empty({4}, DType::bf16);
        rmsnorm_forward(x, w, y, bad, kEps);
      },
      {"[rmsnorm_forward]", "rstd bf16[4]"});
  expect_error<DTypeError>(
      [&] {
        Tensor xi = Tensor::empty({4, 8}, DType::i32);
        rmsnorm_forward(xi, w, y, rstd, kEps);
      },
      {"[rmsnorm_forward]", "x i32[4, 8]"});
  expect_error<DTypeError>(
      [&] {
        Tensor dx = Tensor::empty({4, 8}, DType::bf16), dw = Tensor::empty({8}, DType::f16);
        rmsnorm_backward(x, w, rstd, y, dx, dw);
      },
      {"[rmsnorm_backward]", "dw f16[8]", "w bf16[8]"});
  expect_error<ShapeError>(
      [&] {
        Tensor dx = Tensor::empty({4, 8}, DType::bf16), dw = Tensor::empty({8}, DType::f32);
        Tensor db = Tensor::empty({3}, DType::f32);
        layernorm_backward(x, w, mean, rstd, y, dx, dw, db);
      },
      {"[layernorm_backward]", "db f32[3]", "w bf16[8]"});
  expect_error<DTypeError>(
      [&] {
        Tensor b = Tensor::empty({8}, DType::f32);
        layernorm_forward(x, w, b, y, mean, rstd, kEps);
      },
      {"[layernorm_forward]", "w bf16[8]", "b f32[8]"});
  expect_error<ShapeError>(
      [&] {
        Tensor xt = test::random_tensor({8, 4}, DType::bf16, 93).transpose(0, 1);
        rmsnorm_forward(xt, w, y, rstd, kEps);
      },
      {"[rmsnorm_forward]", "must be contiguous"});
  expect_error<ValueError>([&] { rmsnorm_forward(x, w, y, rstd, -1.0f); },
                           {"[rmsnorm_forward]", "eps"});
  // A tensor claiming to live on a GPU: the device check fires before any memory is touched.
  std::vector<uint16_t> storage(8);
  Tensor wg = Tensor::wrap(storage.data(), {8}, DType::bf16, Device::cuda(0));
  expect_error<DeviceError>([&] { rmsnorm_forward(x, wg, y, rstd, kEps); },
                            {"[rmsnorm_forward]", "on cuda:0", "on cpu"});
}

}  // namespace
}  // namespace zt
