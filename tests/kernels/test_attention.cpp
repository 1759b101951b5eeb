// CPU causal grouped-query attention against the float64 reference (reference_attention.h): forward
// outputs and lse, gradients (reference and finite differences), row subsets, determinism across
// thread counts, and argument errors.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <numeric>
#include <string>

#include "kernels/reference_attention.h"
#include "support/test_util.h"
#include "zerotrain/kernels/attention.h"
#include "zerotrain/kernels/cpu/attention.h"

namespace zt {
namespace {

using kernels::AttentionOptions;

using Problem = test::AttentionInputs;

std::string describe(const Problem& p, DType dt) {
  const auto& s = p.shape;
  return str(dtype_name(dt), " B=", s.B, " S=", s.S, " H=", s.Hq, "/", s.Hkv, " D=", s.D,
             " window=", s.window);
}

// Outputs are rounded to the dtype once; lse is always f32. Gradients sum many rounded terms.
test::Tolerance out_tolerance(DType dt) {
  switch (dt) {
    case DType::f32:
      return {2e-6, 2e-5};
    case DType::f16:
      return {1e-3, 2e-3};
    default:
      return {4e-3, 8e-3};
  }
}
test::Tolerance grad_tolerance(DType dt) {
  switch (dt) {
    case DType::f32:
      return {1e-5, 1e-4};
    case DType::f16:
      return {2e-3, 4e-3};
    default:
      return {8e-3, 1.6e-2};
  }
}
constexpr test::Tolerance kLseTolerance{1e-5, 1e-5};

class AttentionCpu : public ::testing::TestWithParam<DType> {};

TEST_P(AttentionCpu, ForwardAndBackwardMatchReference) {
  const DType dt = GetParam();
  struct Heads {
    int64_t q, kv;
  };
  uint64_t seed = 100;
  for (int64_t S : {1, 17, 64, 130})
    for (Heads h : {Heads{4, 4}, Heads{8, 2}, Heads{6, 1}})
      for (int64_t D : {16, 64})
        for (int64_t window : {0, 5}) {
          Problem p = test::attention_inputs(2, S, h.q, h.kv, D, window, dt, seed += 10);
          const std::string what = describe(p, dt);
          const test::AttentionRef ref =
              test::attention_reference(p.shape, test::to_doubles(p.q), test::to_doubles(p.k),
                                        test::to_doubles(p.v), test::to_doubles(p.dout));
          const AttentionOptions opt{0.0f, window, {}};
          Tensor out = Tensor::empty(p.q.shape(), dt);
          Tensor lse = Tensor::empty({2, h.q, S}, DType::f32);
          kernels::attention_forward(p.q, p.k, p.v, out, lse, opt);
          test::expect_close(ref.out, out, out_tolerance(dt), what + " out");
          test::expect_close(ref.lse, lse, kLseTolerance, what + " lse");

          Tensor dq = Tensor::empty(p.q.shape(), dt), dk = Tensor::empty(p.k.shape(), dt),
                 dv = Tensor::empty(p.v.shape(), dt);
          kernels::attention_backward(p.q, p.k, p.v, out, lse, p.dout, dq, dk, dv, opt);
          test::expect_close(ref.dq, dq, grad_tolerance(dt), what + " dq");
          test::expect_close(ref.dk, dk, grad_tolerance(dt), what + " dk");
          test::expect_close(ref.dv, dv, grad_tolerance(dt), what + " dv");
        }
}

INSTANTIATE_TEST_SUITE_P(Attention, AttentionCpu,
                         ::testing::Values(DType::f32, DType::f16, DType::bf16),
                         [](const ::testing::TestParamInfo<DType>& p) {
                           return std::string(dtype_name(p.param));
                         });

TEST(AttentionCpuGrad, MatchesFiniteDifferences) {
  for (int64_t window : {0, 3}) {
    Problem p = test::attention_inputs(1, 6, 4, 2, 8, window, DType::f32, 7 + window);
    const AttentionOptions opt{0.0f, window, {}};
    const std::vector<float> cot = p.dout.to_floats();
    auto loss = [&](const std::vector<std::vector<float>>& x) {
      Tensor q = Tensor::from_floats(x[0], p.q.shape(), DType::f32);
      Tensor k = Tensor::from_floats(x[1], p.k.shape(), DType::f32);
      Tensor v = Tensor::from_floats(x[2], p.v.shape(), DType::f32);
      Tensor out = Tensor::empty(q.shape(), DType::f32);
      Tensor lse = Tensor::empty({1, 4, 6}, DType::f32);
      kernels::attention_forward(q, k, v, out, lse, opt);
      std::vector<double> o = test::to_doubles(out), c(cot.begin(), cot.end());
      return test::dot(o, c);
    };
    Tensor out = Tensor::empty(p.q.shape(), DType::f32), lse = Tensor::empty({1, 4, 6}, DType::f32);
    kernels::attention_forward(p.q, p.k, p.v, out, lse, opt);
    Tensor dq = Tensor::empty(p.q.shape(), DType::f32), dk = Tensor::empty(p.k.shape(), DType::f32),
           dv = Tensor::empty(p.v.shape(), DType::f32);
    kernels::attention_backward(p.q, p.k, p.v, out, lse, p.dout, dq, dk, dv, opt);
    test::expect_gradients_match_fd(
        loss, {p.q.to_floats(), p.k.to_floats(), p.v.to_floats()},
        {test::to_doubles(dq), test::to_doubles(dk), test::to_doubles(dv)},
        str("attention window=", window), 1e-2, 1e-2, 8);
  }
}

TEST(AttentionCpuOptions, ExplicitScaleAndWideWindow) {
  Problem p = test::attention_inputs(1, 9, 4, 2, 16, 0, DType::f32, 55);
  p.shape.scale = 0.3;
  const test::AttentionRef ref = test::attention_reference(
      p.shape, test::to_doubles(p.q), test::to_doubles(p.k), test::to_doubles(p.v));
  for (int64_t window : {0, 9, 100}) {  // a window of S or more is full causal
    Tensor out = Tensor::empty(p.q.shape(), DType::f32), lse = Tensor::empty({1, 4, 9}, DType::f32);
    kernels::attention_forward(p.q, p.k, p.v, out, lse, {0.3f, window, {}});
    test::expect_close(ref.out, out, out_tolerance(DType::f32), str("out window=", window));
    test::expect_close(ref.lse, lse, kLseTolerance, str("lse window=", window));
  }
}

TEST(AttentionCpuPaths, ARunStatesThePathsThatRan) {
  Problem p = test::attention_inputs(1, 5, 2, 2, 8, 0, DType::f32, 56);
  Tensor out = Tensor::empty(p.q.shape(), DType::f32), lse = Tensor::empty({1, 2, 5}, DType::f32);
  kernels::attention_forward(p.q, p.k, p.v, out, lse);
  const std::string used = kernels::attention_paths_used();
  EXPECT_NE(used.find("cpu"), std::string::npos) << used;
  EXPECT_TRUE(used == "cpu" || used.ends_with(" and cpu")) << used;  // cpu is named last
}

TEST(AttentionCpuRows, RowSubsetsEqualTheFullRun) {
  for (int64_t window : {0, 7}) {
    Problem p = test::attention_inputs(2, 40, 6, 2, 16, window, DType::bf16, 300 + window);
    const AttentionOptions opt{0.0f, window, {}};
    Tensor out = Tensor::empty(p.q.shape(), DType::bf16),
           lse = Tensor::empty({2, 6, 40}, DType::f32);
    kernels::attention_forward(p.q, p.k, p.v, out, lse, opt);
    Tensor dq = Tensor::empty(p.q.shape(), DType::bf16),
           dk = Tensor::empty(p.k.shape(), DType::bf16),
           dv = Tensor::empty(p.v.shape(), DType::bf16);
    kernels::attention_backward(p.q, p.k, p.v, out, lse, p.dout, dq, dk, dv, opt);

    const std::vector<int64_t> rows = {39, 0, 17, 17, 8};
    const auto R = static_cast<int64_t>(rows.size());
    Tensor out_r = Tensor::empty({2, R, 6, 16}, DType::bf16),
           lse_r = Tensor::empty({2, 6, R}, DType::f32);
    kernels::cpu::attention_forward_rows(p.q, p.k, p.v, rows, out_r, lse_r, opt);
    Tensor dq_r = Tensor::empty({2, R, 6, 16}, DType::bf16),
           dk_r = Tensor::empty({2, R, 2, 16}, DType::bf16),
           dv_r = Tensor::empty({2, R, 2, 16}, DType::bf16);
    kernels::cpu::attention_backward_rows(p.q, p.k, p.v, out, lse, p.dout, rows, dq_r, rows, dk_r,
                                          dv_r, opt);
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t r = 0; r < R; ++r) {
        const int64_t i = rows[static_cast<size_t>(r)];
        const std::string at = str("window=", window, " b=", b, " row ", i);
        test::expect_bitwise_equal(out.select(0, b).select(0, i), out_r.select(0, b).select(0, r),
                                   at + " out");
        test::expect_bitwise_equal(lse.select(0, b).select(1, i), lse_r.select(0, b).select(1, r),
                                   at + " lse");
        test::expect_bitwise_equal(dq.select(0, b).select(0, i), dq_r.select(0, b).select(0, r),
                                   at + " dq");
        test::expect_bitwise_equal(dk.select(0, b).select(0, i), dk_r.select(0, b).select(0, r),
                                   at + " dk");
        test::expect_bitwise_equal(dv.select(0, b).select(0, i), dv_r.select(0, b).select(0, r),
                                   at + " dv");
      }
    Tensor bad = Tensor::empty({2, 1, 6, 16}, DType::bf16),
           bad_lse = Tensor::empty({2, 6, 1}, DType::f32);
    EXPECT_THROW(kernels::cpu::attention_forward_rows(p.q, p.k, p.v, {40}, bad, bad_lse, opt),
                 ValueError);
  }
}

TEST(AttentionCpuDeterminism, SameBitsForAnyThreadCount) {
  Problem p = test::attention_inputs(2, 70, 8, 2, 32, 0, DType::f32, 77);
  auto run = [&](int threads) {
    const int saved = omp_get_max_threads();
    omp_set_num_threads(threads);
    std::vector<Tensor> r = {
        Tensor::empty(p.q.shape(), DType::f32), Tensor::empty({2, 8, 70}, DType::f32),
        Tensor::empty(p.q.shape(), DType::f32), Tensor::empty(p.k.shape(), DType::f32),
        Tensor::empty(p.v.shape(), DType::f32)};
    kernels::attention_forward(p.q, p.k, p.v, r[0], r[1]);
    kernels::attention_backward(p.q, p.k, p.v, r[0], r[1], p.dout, r[2], r[3], r[4]);
    omp_set_num_threads(saved);
    return r;
  };
  const auto one = run(1), three = run(3);
  const char* names[] = {"out", "lse", "dq", "dk", "dv"};
  for (size_t i = 0; i < one.size(); ++i)
    test::expect_bitwise_equal(one[i], three[i], names[i]);
}

// Expects `fn` to throw E with a message containing every piece of `parts`.
template <typename E, typename Fn>
void expect_error(Fn fn, const std::vector<std::string>& parts) {
  try {
    fn();
    ADD_FAILURE() << "expected an exception";
  } catch (const E& e) {
    for (const auto& part : parts)
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
          << e.what() << "\nmissing: " << part;
  }
}

TEST(AttentionCpuErrors, BadArgumentsThrowTypedErrors) {
  const DType f = DType::f32;
  Tensor q = Tensor::zeros({2, 5, 6, 8}, f), k = Tensor::zeros({2, 5, 2, 8}, f),
         v = Tensor::zeros({2, 5, 2, 8}, f);
  Tensor out = Tensor::zeros({2, 5, 6, 8}, f), lse = Tensor::zeros({2, 6, 5}, f);
  const std::string fwd = "[attention_forward]";

  Tensor k4 = Tensor::zeros({2, 5, 4, 8}, f);
  expect_error<ShapeError>([&] { kernels::attention_forward(q, k4, k4, out, lse); },
                           {fwd, "f32[2, 5, 6, 8]", "f32[2, 5, 4, 8]", "multiple"});
  Tensor k_short = Tensor::zeros({2, 4, 2, 8}, f);
  expect_error<ShapeError>([&] { kernels::attention_forward(q, k_short, k_short, out, lse); },
                           {fwd, "f32[2, 5, 6, 8]", "f32[2, 4, 2, 8]"});
  Tensor v_wide = Tensor::zeros({2, 5, 2, 16}, f);
  expect_error<ShapeError>([&] { kernels::attention_forward(q, k, v_wide, out, lse); },
                           {fwd, "f32[2, 5, 2, 8]", "f32[2, 5, 2, 16]"});
  Tensor out_bad = Tensor::zeros({2, 5, 6, 4}, f);
  expect_error<ShapeError>([&] { kernels::attention_forward(q, k, v, out_bad, lse); },
                           {fwd, "f32[2, 5, 6, 8]", "f32[2, 5, 6, 4]"});
  Tensor lse_bad = Tensor::zeros({2, 5, 6}, f);
  expect_error<ShapeError>([&] { kernels::attention_forward(q, k, v, out, lse_bad); },
                           {fwd, "lse f32[2, 5, 6]", "[2, 6, 5]"});
  Tensor q3 = Tensor::zeros({2, 5, 48}, f);
  expect_error<ShapeError>([&] { kernels::attention_forward(q3, k, v, out, lse); },
                           {fwd, "f32[2, 5, 48]"});

  Tensor k_half = Tensor::zeros({2, 5, 2, 8}, DType::f16);
  expect_error<DTypeError>([&] { kernels::attention_forward(q, k_half, v, out, lse); },
                           {fwd, "f32[2, 5, 6, 8]", "f16[2, 5, 2, 8]"});
  Tensor lse_half = Tensor::zeros({2, 6, 5}, DType::bf16);
  expect_error<DTypeError>([&] { kernels::attention_forward(q, k, v, out, lse_half); },
                           {fwd, "bf16[2, 6, 5]"});
  Tensor qi = Tensor::zeros({2, 5, 6, 8}, DType::i32);
  expect_error<DTypeError>([&] { kernels::attention_forward(qi, k, v, out, lse); },
                           {fwd, "i32[2, 5, 6, 8]"});
  expect_error<ValueError>(
      [&] {
        kernels::attention_forward(q, k, v, out, lse, {0.0f, -1, {}});
      },
      {fwd, "-1"});
  Tensor q_strided = Tensor::zeros({2, 6, 5, 8}, f).transpose(1, 2);
  expect_error<ShapeError>([&] { kernels::attention_forward(q_strided, k, v, out, lse); },
                           {fwd, "contiguous"});

  const std::string bwd = "[attention_backward]";
  Tensor dq = Tensor::zeros({2, 5, 6, 8}, f), dv = Tensor::zeros({2, 5, 2, 8}, f);
  Tensor dk_bad = Tensor::zeros({2, 5, 6, 8}, f);
  expect_error<ShapeError>(
      [&] { kernels::attention_backward(q, k, v, out, lse, out, dq, dk_bad, dv); },
      {bwd, "k f32[2, 5, 2, 8]", "dk f32[2, 5, 6, 8]"});
  Tensor dout_half = Tensor::zeros({2, 5, 6, 8}, DType::f16);
  Tensor dk = Tensor::zeros({2, 5, 2, 8}, f);
  expect_error<DTypeError>(
      [&] { kernels::attention_backward(q, k, v, out, lse, dout_half, dq, dk, dv); },
      {bwd, "dout f16[2, 5, 6, 8]"});
}

TEST(AttentionCpuEmpty, ZeroLengthSequenceIsANoOpAndZeroesKvGrads) {
  Tensor q = Tensor::zeros({1, 0, 4, 8}, DType::f32), k = Tensor::zeros({1, 0, 2, 8}, DType::f32);
  Tensor out = Tensor::zeros({1, 0, 4, 8}, DType::f32), lse = Tensor::zeros({1, 4, 0}, DType::f32);
  EXPECT_NO_THROW(kernels::attention_forward(q, k, k, out, lse));
  Tensor q0 = Tensor::zeros({1, 3, 0, 8}, DType::f32), k1 = Tensor::zeros({1, 3, 1, 8}, DType::f32);
  Tensor dk = Tensor::from_floats(std::vector<float>(24, 5.f), {1, 3, 1, 8}, DType::f32);
  Tensor dv = dk.clone(), lse0 = Tensor::zeros({1, 0, 3}, DType::f32);
  kernels::attention_backward(q0, k1, k1, q0, lse0, q0, q0, dk, dv);
  EXPECT_EQ(dk.to_floats(), std::vector<float>(24, 0.f));
  EXPECT_EQ(dv.to_floats(), std::vector<float>(24, 0.f));
}

}  // namespace
}  // namespace zt
