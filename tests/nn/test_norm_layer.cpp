// Norm layer (RMSNorm, LayerNorm): forward against float64 formulas, gradients against finite
// differences, apply() equal to forward(), frozen weights, and release.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "nn/nn_test_util.h"
#include "support/test_util.h"
#include "zerotrain/core/error.h"
#include "zerotrain/nn/norm.h"

namespace zt {
namespace {

using nn::Norm;
using nn::NormKind;

std::vector<nn::Parameter*> params_of(Norm& n) {
  std::vector<nn::Parameter*> p;
  n.append_parameters(p);
  return p;
}

TEST(NnNorm, NamesAndParameters) {
  Norm r("model.norm", 8, NormKind::rms, 1e-6);
  EXPECT_EQ(params_of(r).size(), 1u);
  EXPECT_EQ(r.weight.name, "model.norm.weight");
  EXPECT_EQ(r.weight.kind, nn::ParamKind::norm);
  Norm l("transformer.ln_f", 8, NormKind::layer, 1e-5);
  ASSERT_EQ(params_of(l).size(), 2u);
  EXPECT_EQ(l.bias.name, "transformer.ln_f.bias");
  EXPECT_EQ(l.bias.kind, nn::ParamKind::bias);
}

TEST(NnNorm, ForwardMatchesFloat64) {
  const int64_t n = 5, c = 12;
  const double eps = 1e-5;
  for (NormKind kind : {NormKind::rms, NormKind::layer}) {
    Norm norm("n", c, kind, eps);
    auto params = params_of(norm);
    test::allocate(params, DType::f32, DType::f32);
    test::randomize(params, 2);
    const Tensor x = test::random_tensor({n, c}, DType::f32, 3, -2.0f, 2.0f);
    const Tensor y = norm.forward(x, {});
    const auto xv = test::to_doubles(x), w = test::to_doubles(norm.weight.value);
    const auto b =
        kind == NormKind::layer ? test::to_doubles(norm.bias.value) : std::vector<double>(c, 0.0);
    std::vector<double> ref;
    for (int64_t r = 0; r < n; ++r) {
      double mean = 0, var = 0;
      if (kind == NormKind::layer) {
        for (int64_t i = 0; i < c; ++i)
          mean += xv[r * c + i];
        mean /= c;
      }
      for (int64_t i = 0; i < c; ++i)
        var += (xv[r * c + i] - mean) * (xv[r * c + i] - mean);
      const double rstd = 1 / std::sqrt(var / c + eps);
      for (int64_t i = 0; i < c; ++i)
        ref.push_back((xv[r * c + i] - mean) * rstd * w[i] + b[i]);
    }
    test::expect_close(ref, y, {1e-5, 1e-5}, "norm forward");
    test::expect_bitwise_equal(y, norm.apply(x, {}), "apply == forward");
  }
}

TEST(NnNorm, GradientsMatchFiniteDifferences) {
  for (NormKind kind : {NormKind::rms, NormKind::layer}) {
    Norm norm("n", 10, kind, 1e-5);
    auto params = params_of(norm);
    test::allocate(params, DType::f32, DType::f32);
    test::randomize(params, 2);
    test::LayerProbe probe{[&](const Tensor& x) { return norm.forward(x, {}); },
                           [&](const Tensor& dy) { return norm.backward(dy, {}); }, params};
    test::expect_layer_gradients_match_fd(probe, test::random_tensor({4, 10}, DType::f32, 6), 8,
                                          kind == NormKind::rms ? "rmsnorm" : "layernorm");
  }
}

TEST(NnNorm, FrozenWeightAndRelease) {
  Norm norm("n", 6, NormKind::layer, 1e-5);
  auto params = params_of(norm);
  test::allocate(params, DType::f32, DType::f32);
  test::randomize(params, 2);
  const Tensor x = test::random_tensor({3, 6}, DType::f32, 1);
  const Tensor dy = test::random_tensor({3, 6}, DType::f32, 2);
  norm.forward(x, {});
  const Tensor dx_full = norm.backward(dy, {});
  const auto db = test::to_doubles(norm.bias.grad);
  test::zero_grads(params);
  norm.weight.grad = Tensor();  // frozen
  norm.forward(x, {});
  test::expect_bitwise_equal(dx_full, norm.backward(dy, {}), "dx with a frozen weight");
  test::expect_close(db, norm.bias.grad, {0, 0}, "bias grad with a frozen weight");
  norm.release();
  EXPECT_THROW(norm.backward(dy, {}), ValueError);
}

}  // namespace
}  // namespace zt
