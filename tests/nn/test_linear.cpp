// Linear in both weight layouts (nn.Linear [out, in] and GPT-2 Conv1D [in, out]), with and without
// bias: forward and every gradient against float64 formulas, gradients added to (never overwriting)
// the grad buffers, finite differences, bf16 values with f32 gradients, and shape errors.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "nn/nn_test_util.h"
#include "support/test_util.h"
#include "zerotrain/core/error.h"
#include "zerotrain/nn/linear.h"

namespace zt {
namespace {

using nn::Linear;
using nn::WeightLayout;

struct Ref {
  std::vector<double> y, dx, dw, db;
};

// w as stored: [out, in] (out_in) or [in, out] (in_out).
Ref reference(const std::vector<double>& x, const std::vector<double>& w,
              const std::vector<double>& b, const std::vector<double>& dy, int64_t n, int64_t in,
              int64_t out, WeightLayout layout) {
  auto W = [&](int64_t o, int64_t i) {
    return layout == WeightLayout::out_in ? w[static_cast<size_t>(o * in + i)]
                                          : w[static_cast<size_t>(i * out + o)];
  };
  Ref r;
  r.y.assign(static_cast<size_t>(n * out), 0.0);
  r.dx.assign(static_cast<size_t>(n * in), 0.0);
  r.dw.assign(static_cast<size_t>(in * out), 0.0);
  r.db.assign(static_cast<size_t>(out), 0.0);
  for (int64_t t = 0; t < n; ++t)
    for (int64_t o = 0; o < out; ++o) {
      double s = b.empty() ? 0.0 : b[static_cast<size_t>(o)];
      const double g = dy[static_cast<size_t>(t * out + o)];
      for (int64_t i = 0; i < in; ++i) {
        s += x[static_cast<size_t>(t * in + i)] * W(o, i);
        r.dx[static_cast<size_t>(t * in + i)] += g * W(o, i);
        const size_t wi = layout == WeightLayout::out_in ? static_cast<size_t>(o * in + i)
                                                         : static_cast<size_t>(i * out + o);
        r.dw[wi] += g * x[static_cast<size_t>(t * in + i)];
      }
      r.y[static_cast<size_t>(t * out + o)] = s;
      r.db[static_cast<size_t>(o)] += g;
    }
  return r;
}

std::vector<nn::Parameter*> params_of(Linear& l) {
  std::vector<nn::Parameter*> p;
  l.append_parameters(p);
  return p;
}

TEST(NnLinear, ShapesAndNames) {
  Linear a("m.q_proj", 8, 5, true);
  EXPECT_EQ(a.weight.name, "m.q_proj.weight");
  EXPECT_EQ(a.weight.shape, (Shape{5, 8}));
  EXPECT_EQ(a.bias.name, "m.q_proj.bias");
  EXPECT_EQ(a.bias.shape, (Shape{5}));
  Linear c("h.0.attn.c_attn", 8, 24, true, WeightLayout::in_out);
  EXPECT_EQ(c.weight.shape, (Shape{8, 24}));
  Linear nb("x", 8, 5, false);
  EXPECT_EQ(params_of(nb).size(), 1u);
}

TEST(NnLinear, MatchesFloat64AndAccumulates) {
  const int64_t n = 6, in = 7, out = 5;
  uint64_t seed = 1;
  for (WeightLayout layout : {WeightLayout::out_in, WeightLayout::in_out}) {
    for (bool bias : {false, true}) {
      for (DType dt : {DType::f32, DType::bf16}) {
        const std::string what = std::string(layout == WeightLayout::out_in ? "out_in" : "in_out") +
                                 (bias ? " bias " : " ") + std::string(dtype_name(dt));
        Linear l("lin", in, out, bias, layout);
        auto params = params_of(l);
        test::allocate(params, dt, DType::f32);
        test::randomize(params, seed++, 1.0f);
        for (auto* p : params)
          p->grad.fill(1.0);  // gradients must be added to this
        const Tensor x = test::random_tensor({n, in}, dt, seed++);
        const Tensor dy = test::random_tensor({n, out}, dt, seed++);
        const Tensor y = l.forward(x, {});
        Tensor dx = Tensor::empty({n, in}, dt);
        l.backward(x, dy, &dx, false, {});
        const Ref r = reference(test::to_doubles(x), test::to_doubles(l.weight.value),
                                bias ? test::to_doubles(l.bias.value) : std::vector<double>{},
                                test::to_doubles(dy), n, in, out, layout);
        const test::Tolerance tol =
            dt == DType::f32 ? test::Tolerance{1e-5, 1e-5} : test::Tolerance{2e-2, 1e-2};
        test::expect_close(r.y, y, tol, what + " y");
        test::expect_close(r.dx, dx, tol, what + " dx");
        auto plus1 = [](std::vector<double> v) {
          for (double& z : v)
            z += 1.0;
          return v;
        };
        test::expect_close(plus1(r.dw), l.weight.grad, {1e-5, 1e-5}, what + " dw");
        if (bias) test::expect_close(plus1(r.db), l.bias.grad, {1e-5, 1e-5}, what + " db");
        // dx accumulation
        l.backward(x, dy, &dx, true, {});
        std::vector<double> twice = r.dx;
        for (double& z : twice)
          z *= 2;
        test::expect_close(twice, dx, tol, what + " dx accumulated");
      }
    }
  }
}

TEST(NnLinear, GradientsMatchFiniteDifferences) {
  for (WeightLayout layout : {WeightLayout::out_in, WeightLayout::in_out}) {
    Linear l("lin", 6, 4, true, layout);
    auto params = params_of(l);
    test::allocate(params, DType::f32, DType::f32);
    test::randomize(params, 3, 1.0f);
    const Tensor x = test::random_tensor({5, 6}, DType::f32, 4);
    Tensor saved;
    test::LayerProbe probe{[&](const Tensor& in) {
                             saved = in;
                             return l.forward(in, {});
                           },
                           [&](const Tensor& dy) {
                             Tensor dx = Tensor::empty(saved.shape(), DType::f32);
                             l.backward(saved, dy, &dx, false, {});
                             return dx;
                           },
                           params};
    test::expect_layer_gradients_match_fd(probe, x, 5,
                                          layout == WeightLayout::out_in ? "out_in" : "in_out");
  }
}

TEST(NnLinear, FrozenWeightGetsNoGradient) {
  Linear l("lin", 4, 3, true);
  auto params = params_of(l);
  test::allocate(params, DType::f32, DType::f32);
  test::randomize(params, 3);
  l.weight.grad = Tensor();
  const Tensor x = test::random_tensor({2, 4}, DType::f32, 1);
  const Tensor dy = test::random_tensor({2, 3}, DType::f32, 2);
  l.backward(x, dy, nullptr, false, {});
  test::expect_close({dy.to_floats()[0] + dy.to_floats()[3], dy.to_floats()[1] + dy.to_floats()[4],
                      dy.to_floats()[2] + dy.to_floats()[5]},
                     l.bias.grad, {1e-6, 1e-6}, "bias grad");
}

TEST(NnLinear, ShapeErrorsNameTheWeight) {
  Linear l("model.layers.0.mlp.up_proj", 4, 3, false);
  test::allocate(params_of(l), DType::f32, DType::f32);
  try {
    l.forward(Tensor::zeros({2, 5}, DType::f32), {});
    ADD_FAILURE() << "expected ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("model.layers.0.mlp.up_proj.weight"), std::string::npos)
        << e.what();
  }
  Linear unset("lm", 4, 3, false);
  EXPECT_THROW(unset.forward(Tensor::zeros({2, 4}, DType::f32), {}), ValueError);
}

}  // namespace
}  // namespace zt
