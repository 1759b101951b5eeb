// CPU AdamW against the float64 reference of torch's formulas (reference_adamw.h): 50-step f32
// trajectories with weight decay and bias correction on and off, grad_scale != 1 and every grad
// dtype; param_copy equal to the rounded params; the low-precision mode (f16/bf16 params, state in
// f32 or the param dtype) one step at a time; hyper-parameter and argument errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "kernels/reference_adamw.h"
#include "support/test_util.h"
#include "zerotrain/kernels/adamw.h"

namespace zt {
namespace {

using kernels::adamw_step;
using kernels::AdamWParams;

struct TrajectoryCase {
  float eps;
  float weight_decay;
  bool bias_correction;
  float grad_scale;
  DType grad_dtype;
};

std::string name_of(const TrajectoryCase& c) {
  return "eps=" + std::to_string(c.eps) + " wd=" + std::to_string(c.weight_decay) +
         " bias_correction=" + std::to_string(c.bias_correction) +
         " grad_scale=" + std::to_string(c.grad_scale) + " grad " +
         std::string(dtype_name(c.grad_dtype));
}

TEST(AdamWCpu, F32TrajectoryMatchesFloat64ReferenceOver50Steps) {
  const int64_t n = 1037;  // odd: not a multiple of any vector width
  // A large eps in some cases makes its placement (after dividing by sqrt(bc2)) visible.
  // {eps, weight_decay, bias_correction, grad_scale, grad dtype}
  std::vector<TrajectoryCase> cases = {{1e-8f, 0.f, true, 1.f, DType::f32},
                                       {1e-3f, 0.1f, true, 1.f, DType::f32},
                                       {1e-3f, 0.f, false, 1.f, DType::f32},
                                       {1e-8f, 0.1f, false, 1.f, DType::f32}};
  for (DType g : {DType::f32, DType::bf16, DType::f16})
    cases.push_back({1e-6f, 0.05f, true, 0.25f, g});
  uint64_t seed = 1000;
  for (const TrajectoryCase& c : cases) {
    SCOPED_TRACE(name_of(c));
    Tensor param = test::random_tensor({n}, DType::f32, ++seed);
    Tensor m = Tensor::zeros({n}, DType::f32), v = Tensor::zeros({n}, DType::f32);
    test::AdamWState ref{test::to_doubles(param), std::vector<double>(n, 0.0),
                         std::vector<double>(n, 0.0)};
    AdamWParams hp;
    hp.lr = 1e-2f;
    hp.eps = c.eps;
    hp.weight_decay = c.weight_decay;
    hp.bias_correction = c.bias_correction;
    hp.grad_scale = c.grad_scale;
    for (int64_t step = 1; step <= 50; ++step) {
      hp.step = step;
      Tensor grad = test::random_tensor({n}, c.grad_dtype, ++seed, -2.f, 2.f);
      adamw_step(param, grad, m, v, hp);
      test::adamw_reference_step(ref, test::to_doubles(grad), hp);
    }
    // Each step rounds p to f32 at the scale it had then: the error is relative to the largest
    // |p|, which small final values inherit.
    double p_max = 0;
    for (double x : ref.p)
      p_max = std::max(p_max, std::fabs(x));
    test::expect_close(ref.p, param, {1e-6 * p_max, 1e-6}, "param");
    // m = beta1 m + (1 - beta1) g cancels: its f32 error is relative to |g|, not to |m|.
    test::expect_close(ref.m, m, {1e-7 * c.grad_scale, 1e-6}, "m");
    test::expect_close(ref.v, v, {1e-12, 1e-6}, "v");
  }
}

TEST(AdamWCpu, ParamCopyIsTheRoundedParam) {
  const int64_t n = 777;
  for (DType copy_dtype : {DType::bf16, DType::f16}) {
    SCOPED_TRACE(dtype_name(copy_dtype));
    Tensor param = test::random_tensor({n}, DType::f32, 5);
    Tensor m = Tensor::zeros({n}, DType::f32), v = Tensor::zeros({n}, DType::f32);
    Tensor copy = Tensor::empty({n}, copy_dtype);
    AdamWParams hp;
    hp.weight_decay = 0.01f;
    for (int64_t step = 1; step <= 3; ++step) {
      hp.step = step;
      Tensor grad = test::random_tensor({n}, DType::bf16, 10 + step);
      adamw_step(param, grad, m, v, hp, &copy);
      Tensor rounded = Tensor::from_floats(param.to_floats(), {n}, copy_dtype);
      test::expect_bitwise_equal(rounded, copy, "param_copy");
    }
  }
}

// Per-dtype bound on one rounding of a result: unit roundoff, plus half the smallest f16
// subnormal as an absolute floor. For m, whose update cancels, f32 arithmetic adds an error
// relative to the gradient's size `g_abs`.
test::Tolerance rounding_tolerance(DType t, double g_abs = 0) {
  switch (t) {
    case DType::bf16:
      return {1e-7 * g_abs, 1.0 / 256 + 1e-6};
    case DType::f16:
      return {3.1e-8 + 1e-7 * g_abs, 1.0 / 2048 + 1e-6};
    default:
      return {1e-12 + 1e-7 * g_abs, 1e-6};
  }
}

TEST(AdamWCpu, LowPrecisionModeMatchesReferenceStepByStep) {
  const int64_t n = 517;
  uint64_t seed = 2000;
  for (DType pd : {DType::bf16, DType::f16}) {
    for (DType sd : {DType::f32, pd}) {
      for (DType gd : {pd, DType::f32}) {
        SCOPED_TRACE(std::string("param ") + std::string(dtype_name(pd)) + " state " +
                     std::string(dtype_name(sd)) + " grad " + std::string(dtype_name(gd)));
        Tensor param = test::random_tensor({n}, pd, ++seed);
        Tensor m = Tensor::zeros({n}, sd), v = Tensor::zeros({n}, sd);
        Tensor copy = Tensor::empty({n}, DType::bf16);
        AdamWParams hp;
        hp.lr = 3e-2f;
        hp.weight_decay = 0.1f;
        hp.grad_scale = 0.5f;
        for (int64_t step = 1; step <= 10; ++step) {
          SCOPED_TRACE(step);
          hp.step = step;
          Tensor grad = test::random_tensor({n}, gd, ++seed, -2.f, 2.f);
          // The reference starts from the state exactly as stored, so only this step's
          // arithmetic and final rounding can differ.
          test::AdamWState ref{test::to_doubles(param), test::to_doubles(m), test::to_doubles(v)};
          test::adamw_reference_step(ref, test::to_doubles(grad), hp);
          adamw_step(param, grad, m, v, hp, &copy);
          test::expect_close(ref.p, param, rounding_tolerance(pd), "param");
          test::expect_close(ref.m, m, rounding_tolerance(sd, hp.grad_scale), "m");
          test::expect_close(ref.v, v, rounding_tolerance(sd), "v");
          // The copy is the stored (already rounded) param, rounded again to bf16.
          Tensor rounded = Tensor::from_floats(param.to_floats(), {n}, DType::bf16);
          test::expect_bitwise_equal(rounded, copy, "param_copy");
          if (testing::Test::HasFailure()) return;
        }
      }
    }
  }
}

TEST(AdamWCpu, ZeroGradientOnlyDecays) {
  const int64_t n = 9;
  Tensor param = test::random_tensor({n}, DType::f32, 3);
  const std::vector<float> before = param.to_floats();
  Tensor m = Tensor::zeros({n}, DType::f32), v = Tensor::zeros({n}, DType::f32);
  Tensor grad = Tensor::zeros({n}, DType::f32);
  AdamWParams hp;
  hp.lr = 0.1f;
  hp.weight_decay = 0.5f;
  adamw_step(param, grad, m, v, hp);
  const std::vector<float> after = param.to_floats();
  const float decay = static_cast<float>(1.0 - 0.1 * 0.5);
  for (int64_t i = 0; i < n; ++i)
    EXPECT_EQ(after[i], before[i] * decay) << i;
}

TEST(AdamWCpu, HyperParametersOutOfRangeThrowValueError) {
  Tensor param = Tensor::zeros({4}, DType::f32), grad = Tensor::zeros({4}, DType::f32);
  Tensor m = Tensor::zeros({4}, DType::f32), v = Tensor::zeros({4}, DType::f32);
  auto expect_bad = [&](AdamWParams hp, const std::string& what) {
    try {
      adamw_step(param, grad, m, v, hp);
      ADD_FAILURE() << "expected ValueError for " << what;
    } catch (const ValueError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("[adamw_step] " + what), std::string::npos) << msg;
    }
  };
  AdamWParams hp;
  hp.step = 0;
  expect_bad(hp, "step = 0");
  hp = {};
  hp.beta1 = 1.f;
  expect_bad(hp, "beta1 = 1");
  hp = {};
  hp.beta2 = -0.5f;
  expect_bad(hp, "beta2 = -0.5");
  hp = {};
  hp.lr = -1e-3f;
  expect_bad(hp, "lr = -0.001");
  hp = {};
  hp.eps = NAN;
  expect_bad(hp, "eps = nan");
  hp = {};
  hp.weight_decay = -1.f;
  expect_bad(hp, "weight_decay = -1");
}

// Expects `f` to throw E with a message holding every piece of `parts`.
template <typename E, typename F>
void expect_error(F&& f, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "expected an exception";
  } catch (const E& e) {
    const std::string msg = e.what();
    for (const auto& p : parts)
      EXPECT_NE(msg.find(p), std::string::npos) << msg << " lacks " << p;
  }
}

TEST(AdamWCpu, BadArgumentsThrowTypedErrors) {
  Tensor param = Tensor::zeros({6}, DType::f32), grad = Tensor::zeros({6}, DType::f32);
  Tensor m = Tensor::zeros({6}, DType::f32), v = Tensor::zeros({6}, DType::f32);
  const AdamWParams hp;

  Tensor short_grad = Tensor::zeros({5}, DType::f32);
  expect_error<ShapeError>([&] { adamw_step(param, short_grad, m, v, hp); },
                           {"[adamw_step]", "f32[5]", "f32[6]"});
  Tensor short_v = Tensor::zeros({5}, DType::f32);
  expect_error<ShapeError>([&] { adamw_step(param, grad, m, short_v, hp); },
                           {"[adamw_step]", "v f32[5]", "param f32[6]"});
  Tensor bf16_m = Tensor::zeros({6}, DType::bf16);
  expect_error<DTypeError>([&] { adamw_step(param, grad, bf16_m, v, hp); },
                           {"[adamw_step]", "m bf16[6]"});
  Tensor int_grad = Tensor::zeros({6}, DType::i32);
  expect_error<DTypeError>([&] { adamw_step(param, int_grad, m, v, hp); },
                           {"[adamw_step]", "grad i32[6]"});
  Tensor f32_copy = Tensor::zeros({6}, DType::f32);
  expect_error<DTypeError>([&] { adamw_step(param, grad, m, v, hp, &f32_copy); },
                           {"[adamw_step]", "param_copy f32[6]"});
  Tensor bf16_param = Tensor::zeros({6}, DType::bf16);
  Tensor f16_state = Tensor::zeros({6}, DType::f16);
  expect_error<DTypeError>([&] { adamw_step(bf16_param, grad, f16_state, f16_state, hp); },
                           {"[adamw_step]", "m f16[6]"});
  Tensor bf16_v = Tensor::zeros({6}, DType::bf16);
  Tensor f32_m = Tensor::zeros({6}, DType::f32);
  expect_error<DTypeError>([&] { adamw_step(bf16_param, grad, f32_m, bf16_v, hp); },
                           {"[adamw_step]", "m f32[6]", "v bf16[6]"});
  Tensor strided = Tensor::zeros({2, 6}, DType::f32).slice(1, 0, 3);
  Tensor param6 = Tensor::zeros({2, 3}, DType::f32);
  expect_error<ShapeError>([&] { adamw_step(param6, strided, strided, strided, hp); },
                           {"[adamw_step]", "contiguous"});

  float fake[6];
  Tensor cuda_grad = Tensor::wrap(fake, {6}, DType::f32, Device::cuda(0));
  expect_error<DeviceError>([&] { adamw_step(param, cuda_grad, m, v, hp); },
                            {"[adamw_step]", "cuda:0", "on cpu"});
}

TEST(AdamWCpu, EmptyBufferIsANoOp) {
  Tensor e = Tensor::empty({0}, DType::f32);
  Tensor m = Tensor::empty({0}, DType::f32), v = Tensor::empty({0}, DType::f32);
  EXPECT_NO_THROW(adamw_step(e, e, m, v, AdamWParams{}));
}

}  // namespace
}  // namespace zt
