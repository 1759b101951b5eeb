// Gradient clipping as torch.nn.utils.clip_grad_norm_ computes it: the coefficient
// min(1, max_norm / (norm + 1e-6)), the global norm over tensors of mixed dtypes, loss-scale
// unscaling folded into grad_scale, non-finite norms reported, and a clipped AdamW step equal to a
// step on gradients clipped beforehand.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "optim/param_adam.h"
#include "support/test_util.h"
#include "zerotrain/train/grad_clip.h"

namespace zt {
namespace {

using nn::Parameter;
using train::clip_grad_norm;

Parameter param_with_grad(const std::string& name, const std::vector<float>& g, DType dtype) {
  const Shape shape = {static_cast<int64_t>(g.size())};
  return Parameter{name, shape, nn::ParamKind::weight, Tensor::zeros(shape, DType::f32),
                   Tensor::from_floats(g, shape, dtype)};
}

TEST(TrainGradClip, CoefficientFollowsTorch) {
  EXPECT_DOUBLE_EQ(train::clip_coefficient(10.0, 1.0), 1.0 / (10.0 + 1e-6));
  EXPECT_DOUBLE_EQ(train::clip_coefficient(2.0, 3.0), 1.0);  // below the limit: capped at 1
  EXPECT_DOUBLE_EQ(train::clip_coefficient(1.0, 1.0), 1.0 / (1.0 + 1e-6));  // at it: just under 1
  EXPECT_DOUBLE_EQ(train::clip_coefficient(0.0, 1.0), 1.0);
  EXPECT_DOUBLE_EQ(train::clip_coefficient(50.0, 0.0), 1.0);  // clipping off
  EXPECT_DOUBLE_EQ(train::clip_coefficient(50.0, -1.0), 1.0);
  EXPECT_THROW(train::clip_coefficient(NAN, 1.0), ValueError);
  EXPECT_THROW(train::clip_coefficient(INFINITY, 1.0), ValueError);
}

TEST(TrainGradClip, GlobalNormOverTensorsOfMixedDtypes) {
  // 3-4-12-84 chains: sqrt(3^2 + 4^2) = 5, sqrt(5^2 + 12^2) = 13, sqrt(13^2 + 84^2) = 85.
  Parameter a = param_with_grad("a", {3.f, -4.f}, DType::f32);
  Parameter b = param_with_grad("b", {12.f}, DType::bf16);
  Parameter c = param_with_grad("c", {0.f, -84.f, 0.f}, DType::f16);
  EXPECT_DOUBLE_EQ(train::global_grad_norm({a.grad, b.grad}), 13.0);
  const train::ClipResult r = clip_grad_norm({&a, &b, &c}, 1.0);
  EXPECT_TRUE(r.finite);
  EXPECT_DOUBLE_EQ(r.norm, 85.0);
  EXPECT_DOUBLE_EQ(r.clip_coef, 1.0 / (85.0 + 1e-6));
  EXPECT_FLOAT_EQ(r.grad_scale, static_cast<float>(1.0 / (85.0 + 1e-6)));
  const train::ClipResult loose = clip_grad_norm({&a, &b, &c}, 100.0);
  EXPECT_DOUBLE_EQ(loose.clip_coef, 1.0);
  EXPECT_FLOAT_EQ(loose.grad_scale, 1.0f);
  EXPECT_DOUBLE_EQ(train::global_grad_norm({}), 0.0);
}

TEST(TrainGradClip, LossScaleIsDividedOutOfNormAndScale) {
  const double loss_scale = 1024.0;
  Parameter a = param_with_grad("a", {3.f * 1024.f, 4.f * 1024.f}, DType::f32);
  const train::ClipResult r = clip_grad_norm({&a}, 1.0, loss_scale);
  EXPECT_DOUBLE_EQ(r.norm, 5.0);
  EXPECT_DOUBLE_EQ(r.clip_coef, 1.0 / (5.0 + 1e-6));
  EXPECT_FLOAT_EQ(r.grad_scale, static_cast<float>(1.0 / (5.0 + 1e-6) / 1024.0));
  const train::ClipResult unclipped = clip_grad_norm({&a}, 0.0, loss_scale);
  EXPECT_FLOAT_EQ(unclipped.grad_scale, 1.0f / 1024.0f);
  EXPECT_THROW(clip_grad_norm({&a}, 1.0, 0.0), ValueError);
  EXPECT_THROW(clip_grad_norm({&a}, 1.0, NAN), ValueError);
}

TEST(TrainGradClip, NonFiniteNormIsReportedAndRefusedByTheOptimizer) {
  for (float bad : {INFINITY, NAN}) {
    SCOPED_TRACE(bad);
    Parameter a = param_with_grad("a", {1.f, bad}, DType::f32);
    Parameter b = param_with_grad("b", {2.f}, DType::f32);
    const train::ClipResult r = clip_grad_norm({&a, &b}, 1.0);
    EXPECT_FALSE(r.finite);
    EXPECT_FALSE(std::isfinite(r.norm));
    EXPECT_TRUE(std::isnan(r.grad_scale));
    test::ParamAdam opt({&a, &b});
    EXPECT_THROW(opt.step(1e-3f, r.grad_scale), ValueError);
  }
  // f16 gradients that overflow when squared still give a finite norm (accumulated in f32).
  Parameter big = param_with_grad("big", {60000.f, 60000.f}, DType::f16);
  const train::ClipResult r = clip_grad_norm({&big}, 1.0);
  EXPECT_TRUE(r.finite);
  EXPECT_NEAR(r.norm, 60000.0 * std::sqrt(2.0), 1.0);
}

TEST(TrainGradClip, UndefinedGradientIsNamed) {
  Parameter a = param_with_grad("model.layers.3.mlp.up_proj.weight", {1.f}, DType::f32);
  a.grad = Tensor();
  try {
    clip_grad_norm({&a}, 1.0);
    ADD_FAILURE() << "an undefined gradient was accepted";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("model.layers.3.mlp.up_proj.weight"), std::string::npos);
  }
}

// torch: clip_grad_norm_ rewrites the gradients, then AdamW steps. Here the coefficient rides in
// grad_scale; the parameters must come out the same as stepping on pre-clipped gradients.
TEST(TrainGradClip, FoldedClipEqualsClippingTheGradients) {
  const int64_t n = 301;
  Parameter p1{"w",
               {n},
               nn::ParamKind::weight,
               test::random_tensor({n}, DType::f32, 1),
               test::random_tensor({n}, DType::f32, 2, -5.f, 5.f)};
  Parameter p2{"w", {n}, nn::ParamKind::weight, p1.value.clone(), Tensor()};
  const train::ClipResult r = clip_grad_norm({&p1}, 1.0);
  ASSERT_LT(r.clip_coef, 1.0);
  std::vector<float> clipped = p1.grad.to_floats();
  for (float& g : clipped)
    g *= r.grad_scale;
  p2.grad = Tensor::from_floats(clipped, {n}, DType::f32);
  test::ParamAdam folded({&p1}), pre_clipped({&p2});
  folded.step(1e-2f, r.grad_scale);
  pre_clipped.step(1e-2f);
  // g * s rounds once either way (in the kernel or here): identical inputs, identical results.
  test::expect_bitwise_equal(p1.value, p2.value, "params");
}

}  // namespace
}  // namespace zt
