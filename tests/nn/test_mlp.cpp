// MLP sublayers: SwiGLU (gate/up/down, with and without llama's mlp_bias) and GPT-2's GELU-tanh
// Conv1D MLP. Forward against float64 formulas and gradients against finite differences.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "nn/nn_test_util.h"
#include "support/test_util.h"
#include "zerotrain/nn/architecture.h"
#include "zerotrain/nn/gated_mlp.h"
#include "zerotrain/nn/gelu_mlp.h"

namespace zt {
namespace {

using nn::Family;

std::vector<double> matmul(const std::vector<double>& x, const std::vector<double>& w, int64_t n,
                           int64_t in, int64_t out, bool w_out_in, const std::vector<double>* b) {
  std::vector<double> y(static_cast<size_t>(n * out));
  for (int64_t r = 0; r < n; ++r)
    for (int64_t o = 0; o < out; ++o) {
      double s = b ? (*b)[o] : 0.0;
      for (int64_t i = 0; i < in; ++i)
        s += x[r * in + i] * (w_out_in ? w[o * in + i] : w[i * out + o]);
      y[r * out + o] = s;
    }
  return y;
}

TEST(NnMlp, GatedMatchesFloat64AndFiniteDifferences) {
  for (bool bias : {false, true}) {
    nn::ModelConfig c = test::tiny_config(Family::llama);
    c.mlp_bias = bias;
    nn::GatedMlp mlp("model.layers.0.mlp", c, nn::architecture_of(c));
    std::vector<nn::Parameter*> params;
    mlp.append_parameters(params);
    ASSERT_EQ(params.size(), bias ? 6u : 3u);
    test::allocate(params, DType::f32, DType::f32);
    test::randomize(params, 2, 0.4f);
    const int64_t n = 5, C = c.hidden_size, I = c.intermediate_size;
    const Tensor x = test::random_tensor({n, C}, DType::f32, 3);
    auto val = [](const nn::Parameter& p) { return test::to_doubles(p.value); };
    std::vector<double> gb, ub, db;
    if (bias) {
      gb = val(mlp.gate_proj.bias);
      ub = val(mlp.up_proj.bias);
      db = val(mlp.down_proj.bias);
    }
    auto g =
        matmul(test::to_doubles(x), val(mlp.gate_proj.weight), n, C, I, true, bias ? &gb : nullptr);
    const auto u =
        matmul(test::to_doubles(x), val(mlp.up_proj.weight), n, C, I, true, bias ? &ub : nullptr);
    for (size_t i = 0; i < g.size(); ++i)
      g[i] = g[i] / (1 + std::exp(-g[i])) * u[i];
    const auto ref = matmul(g, val(mlp.down_proj.weight), n, I, C, true, bias ? &db : nullptr);
    test::expect_close(ref, mlp.forward(x, {1, n, {}}, {}), {1e-5, 1e-5}, "swiglu forward");
    mlp.release();
    test::LayerProbe probe{[&](const Tensor& in) {
                             return mlp.forward(in, {1, n, {}}, {});
                           },
                           [&](const Tensor& dy) { return mlp.backward(dy, {}); }, params};
    test::expect_layer_gradients_match_fd(probe, x, 9, bias ? "swiglu with bias" : "swiglu");
  }
}

TEST(NnMlp, GeluMatchesFloat64AndFiniteDifferences) {
  const nn::ModelConfig c = test::tiny_config(Family::gpt2);
  nn::GeluMlp mlp("transformer.h.0.mlp", c);
  EXPECT_EQ(mlp.c_fc.weight.shape, (Shape{32, 64}));
  EXPECT_EQ(mlp.c_proj.weight.shape, (Shape{64, 32}));
  std::vector<nn::Parameter*> params;
  mlp.append_parameters(params);
  test::allocate(params, DType::f32, DType::f32);
  test::randomize(params, 2, 0.4f);
  const int64_t n = 5, C = c.hidden_size, I = c.intermediate_size;
  const Tensor x = test::random_tensor({n, C}, DType::f32, 3);
  const auto fb = test::to_doubles(mlp.c_fc.bias.value),
             pb = test::to_doubles(mlp.c_proj.bias.value);
  auto h =
      matmul(test::to_doubles(x), test::to_doubles(mlp.c_fc.weight.value), n, C, I, false, &fb);
  for (double& z : h)
    z = 0.5 * z * (1 + std::tanh(std::sqrt(2 / std::numbers::pi) * (z + 0.044715 * z * z * z)));
  const auto ref = matmul(h, test::to_doubles(mlp.c_proj.weight.value), n, I, C, false, &pb);
  test::expect_close(ref, mlp.forward(x, {1, n, {}}, {}), {1e-5, 1e-5}, "gelu mlp forward");
  mlp.release();
  test::LayerProbe probe{[&](const Tensor& in) {
                           return mlp.forward(in, {1, n, {}}, {});
                         },
                         [&](const Tensor& dy) { return mlp.backward(dy, {}); }, params};
  test::expect_layer_gradients_match_fd(probe, x, 9, "gelu mlp");
}

}  // namespace
}  // namespace zt
