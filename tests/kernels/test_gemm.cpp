// CPU GEMM (OpenBLAS) against the float64 reference: every transpose x dtype x C dtype x bias x
// beta combination at odd sizes, beta == 0 ignoring NaN in C, K == 0, and the front-end's errors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>

#include "kernels/reference_gemm.h"
#include "support/test_util.h"
#include "zerotrain/kernels/gemm.h"

namespace zt {
namespace {

using kernels::GemmOptions;
using test::GemmCase;

void run_grid(DType ab) {
  uint64_t seed = 100;
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{37, 53, 29}, {1, 1, 1}, {5, 1, 70}})
    for (const GemmCase& g : test::gemm_grid(ab, m, n, k)) {
      test::check_gemm_case(g, Device::cpu(), seed += 10);
      if (::testing::Test::HasFailure()) return;
    }
}

TEST(GemmCpu, F32Grid) {
  run_grid(DType::f32);
}
TEST(GemmCpu, Bf16Grid) {
  run_grid(DType::bf16);
}
TEST(GemmCpu, F16Grid) {
  run_grid(DType::f16);
}

TEST(GemmCpu, LargerBlockedProduct) {
  GemmCase g;
  g.m = 131;
  g.n = 257;
  g.k = 515;
  g.trans_b = true;
  g.ab = DType::bf16;
  g.c = DType::bf16;
  g.bias = true;
  test::check_gemm_case(g, Device::cpu(), 7);
}

TEST(GemmCpu, BetaZeroIgnoresNanInC) {
  Tensor a = test::random_tensor({4, 3}, DType::f32, 1);
  Tensor b = test::random_tensor({3, 5}, DType::f32, 2);
  for (DType ct : {DType::f32, DType::bf16}) {
    Tensor aa = ct == DType::f32 ? a : test::random_tensor({4, 3}, ct, 1);
    Tensor bb = ct == DType::f32 ? b : test::random_tensor({3, 5}, ct, 2);
    Tensor c = Tensor::empty({4, 5}, ct);
    c.fill(std::nan(""));
    kernels::gemm(aa, bb, c);
    for (float v : c.to_floats())
      ASSERT_TRUE(std::isfinite(v)) << dtype_name(ct);
  }
}

TEST(GemmCpu, EmptyInnerDimensionScalesCAndAddsBias) {
  Tensor a = Tensor::empty({3, 0}, DType::bf16);
  Tensor b = Tensor::empty({0, 2}, DType::bf16);
  Tensor c = Tensor::from_floats({1, 2, 3, 4, 5, 6}, {3, 2}, DType::f32);
  Tensor bias = Tensor::from_floats({10, 20}, {2}, DType::f32);
  GemmOptions opt;
  opt.beta = 0.5f;
  opt.bias = &bias;
  kernels::gemm(a, b, c, opt);
  EXPECT_EQ(c.to_floats(), (std::vector<float>{10.5f, 21, 11.5f, 22, 12.5f, 23}));
  c.fill(std::nan(""));
  opt.beta = 0.0f;
  kernels::gemm(a, b, c, opt);
  EXPECT_EQ(c.to_floats(), (std::vector<float>{10, 20, 10, 20, 10, 20}));
}

TEST(GemmCpu, EmptyOutputIsANoOp) {
  Tensor a = Tensor::empty({0, 4}, DType::f32);
  Tensor b = test::random_tensor({4, 3}, DType::f32, 3);
  Tensor c = Tensor::empty({0, 3}, DType::f32);
  EXPECT_NO_THROW(kernels::gemm(a, b, c));
}

// Expects `fn` to throw E with a message containing every one of `parts`.
template <typename E, typename Fn>
void expect_error(Fn fn, std::initializer_list<std::string> parts) {
  try {
    fn();
    FAIL() << "expected an exception";
  } catch (const E& e) {
    for (const auto& p : parts)
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what() << " lacks " << p;
  }
}

TEST(GemmCpu, MismatchedInnerDimensionsNameAllShapesAndFlags) {
  Tensor a = Tensor::empty({3, 4}, DType::f32);
  Tensor b = Tensor::empty({5, 6}, DType::f32);
  Tensor c = Tensor::empty({3, 6}, DType::f32);
  expect_error<ShapeError>([&] { kernels::gemm(a, b, c); },
                           {"[gemm]", "f32[3, 4]", "f32[5, 6]", "f32[3, 6]", "trans_a=0",
                            "trans_b=0", "inner dimensions differ (4 vs 5)"});
  GemmOptions t;
  t.trans_b = true;
  expect_error<ShapeError>([&] { kernels::gemm(a, b, c, t); }, {"trans_b=1", "(4 vs 6)"});
}

TEST(GemmCpu, WrongOutputShapeThrows) {
  Tensor a = Tensor::empty({3, 4}, DType::f32);
  Tensor b = Tensor::empty({4, 6}, DType::f32);
  Tensor c = Tensor::empty({6, 3}, DType::f32);
  expect_error<ShapeError>([&] { kernels::gemm(a, b, c); },
                           {"[gemm]", "f32[6, 3]", "c must have shape [3, 6]"});
  GemmOptions t;
  t.trans_a = true;
  Tensor at = Tensor::empty({4, 3}, DType::f32);
  Tensor c_ok = Tensor::empty({3, 6}, DType::f32);
  EXPECT_NO_THROW(kernels::gemm(test::random_tensor({4, 3}, DType::f32, 1),
                                test::random_tensor({4, 6}, DType::f32, 2), c_ok, t));
  expect_error<ShapeError>([&] { kernels::gemm(at, b, c, t); }, {"trans_a=1"});
}

TEST(GemmCpu, DtypeRulesAreEnforced) {
  Tensor a = Tensor::empty({2, 2}, DType::bf16);
  Tensor b16 = Tensor::empty({2, 2}, DType::f16);
  Tensor c = Tensor::empty({2, 2}, DType::bf16);
  expect_error<DTypeError>([&] { kernels::gemm(a, b16, c); },
                           {"[gemm]", "bf16[2, 2]", "f16[2, 2]"});
  Tensor b = Tensor::empty({2, 2}, DType::bf16);
  Tensor c16 = Tensor::empty({2, 2}, DType::f16);
  expect_error<DTypeError>([&] { kernels::gemm(a, b, c16); }, {"a's dtype or f32"});
  Tensor ai = Tensor::empty({2, 2}, DType::i32);
  Tensor ci = Tensor::empty({2, 2}, DType::i32);
  expect_error<DTypeError>([&] { kernels::gemm(ai, ai, ci); }, {"i32[2, 2]"});
  Tensor c32 = Tensor::empty({2, 2}, DType::f32);
  Tensor bias16 = Tensor::empty({2}, DType::bf16);
  GemmOptions opt;
  opt.bias = &bias16;
  expect_error<DTypeError>([&] { kernels::gemm(a, b, c32, opt); }, {"bias bf16[2]", "c's dtype"});
}

TEST(GemmCpu, BadBiasShapeThrows) {
  Tensor a = Tensor::empty({2, 3}, DType::f32);
  Tensor b = Tensor::empty({3, 4}, DType::f32);
  Tensor c = Tensor::empty({2, 4}, DType::f32);
  Tensor bias = Tensor::empty({2}, DType::f32);
  GemmOptions opt;
  opt.bias = &bias;
  expect_error<ShapeError>([&] { kernels::gemm(a, b, c, opt); }, {"bias f32[2]", "shape [4]"});
}

TEST(GemmCpu, LayoutErrorsThrow) {
  Tensor a3 = Tensor::empty({2, 3, 4}, DType::f32);
  Tensor b = Tensor::empty({4, 5}, DType::f32);
  Tensor c = Tensor::empty({2, 5}, DType::f32);
  expect_error<ShapeError>([&] { kernels::gemm(a3, b, c); },
                           {"[gemm]", "f32[2, 3, 4]", "2 dimensions"});
  Tensor at = Tensor::empty({4, 2}, DType::f32).transpose(0, 1);
  expect_error<ShapeError>([&] { kernels::gemm(at, b, c); }, {"contiguous"});
  Tensor sq = Tensor::empty({4, 4}, DType::f32);
  expect_error<ValueError>([&] { kernels::gemm(sq, sq, sq); }, {"overlaps"});
  expect_error<ValueError>([&] { kernels::gemm(Tensor(), b, c); }, {"undefined"});
}

}  // namespace
}  // namespace zt
