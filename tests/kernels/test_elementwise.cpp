// CPU elementwise kernels: every op against its float64 reference for f32/f16/bf16 at odd sizes,
// in-place aliasing, each backward against finite differences, saturation at extreme inputs, and
// the front-end's typed errors. Run: zerotrain_tests --gtest_filter='Elementwise.*'
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kernels/elementwise_cases.h"
#include "support/test_util.h"
#include "zerotrain/kernels/elementwise.h"

namespace zt {
namespace {

using test::ElementwiseCase;

constexpr DType kDTypes[] = {DType::f32, DType::f16, DType::bf16};

std::vector<Tensor> random_inputs(const ElementwiseCase& c, const Shape& shape, DType dtype,
                                  uint64_t seed) {
  std::vector<Tensor> in;
  for (int k = 0; k < c.n_in; ++k)
    in.push_back(test::random_tensor(shape, dtype, seed + 101 * k, c.lo, c.hi));
  return in;
}

// Outputs filled with NaN, so an element the kernel misses fails the comparison.
std::vector<Tensor> poisoned_outputs(const ElementwiseCase& c, const Shape& shape, DType dtype) {
  std::vector<Tensor> out;
  for (int k = 0; k < c.n_out; ++k) {
    out.push_back(Tensor::empty(shape, dtype));
    out.back().fill(std::numeric_limits<double>::quiet_NaN());
  }
  return out;
}

// The float64 reference applied to the inputs' (dtype-rounded) values: one vector per output.
std::vector<std::vector<double>> reference(const ElementwiseCase& c,
                                           const std::vector<Tensor>& in) {
  std::vector<std::vector<double>> x;
  for (const Tensor& t : in)
    x.push_back(test::to_doubles(t));
  const size_t n = x[0].size();
  std::vector<std::vector<double>> y(c.n_out, std::vector<double>(n));
  for (size_t i = 0; i < n; ++i) {
    double xi[3], yi[2];
    for (int k = 0; k < c.n_in; ++k)
      xi[k] = x[k][i];
    c.ref(xi, yi);
    for (int k = 0; k < c.n_out; ++k)
      y[k][i] = yi[k];
  }
  return y;
}

TEST(Elementwise, MatchesFloat64Reference) {
  const Shape shapes[] = {{1}, {7}, {1003}, {65537}, {37, 29}};
  for (const ElementwiseCase& c : test::elementwise_cases()) {
    for (DType dtype : kDTypes) {
      for (const Shape& shape : shapes) {
        const std::string what = str(c.name, " ", dtype_name(dtype), to_string(shape));
        std::vector<Tensor> in = random_inputs(c, shape, dtype, 17);
        std::vector<Tensor> out = poisoned_outputs(c, shape, dtype);
        c.run(in, out, {});
        const auto want = reference(c, in);
        for (int k = 0; k < c.n_out; ++k)
          test::expect_close(want[k], out[k], test::tolerance_for(dtype), str(what, " out", k));
      }
    }
  }
}

TEST(Elementwise, InPlaceMatchesOutOfPlace) {
  // Variant j writes output k over input (j + k) % n_in, so every input is overwritten once.
  for (const ElementwiseCase& c : test::elementwise_cases()) {
    for (DType dtype : kDTypes) {
      const std::vector<Tensor> in = random_inputs(c, {1003}, dtype, 23);
      std::vector<Tensor> want = poisoned_outputs(c, {1003}, dtype);
      c.run(in, want, {});
      for (int j = 0; j < c.n_in; ++j) {
        std::vector<Tensor> work;
        for (const Tensor& t : in)
          work.push_back(t.clone());
        std::vector<Tensor> out;
        for (int k = 0; k < c.n_out; ++k)
          out.push_back(work[(j + k) % c.n_in]);
        c.run(work, out, {});
        for (int k = 0; k < c.n_out; ++k)
          test::expect_bitwise_equal(
              want[k], out[k],
              str(c.name, " ", dtype_name(dtype), " out", k, " over in", (j + k) % c.n_in));
      }
    }
  }
}

// loss(x) = <forward(x), cot> in float64, forward run by the f32 CPU kernel.
double dot_loss(const std::vector<float>& y, const std::vector<double>& cot) {
  double s = 0;
  for (size_t i = 0; i < y.size(); ++i)
    s += y[i] * cot[i];
  return s;
}

TEST(Elementwise, UnaryBackwardsMatchFiniteDifferences) {
  using Fwd = void (*)(const Tensor&, Tensor&, Stream);
  using Bwd = void (*)(const Tensor&, const Tensor&, Tensor&, Stream);
  struct Op {
    const char* name;
    Fwd fwd;
    Bwd bwd;
  };
  const Op unary_ops[] = {{"gelu_tanh", kernels::gelu_tanh_forward, kernels::gelu_tanh_backward},
                          {"silu", kernels::silu_forward, kernels::silu_backward}};
  const int64_t n = 301;
  const std::vector<float> x0 = test::random_floats(n, 5, -5, 5);
  const std::vector<float> cot_f = test::random_floats(n, 6);
  const std::vector<double> cot(cot_f.begin(), cot_f.end());
  for (const Op& op : unary_ops) {
    auto loss = [&](const std::vector<std::vector<float>>& in) {
      Tensor x = Tensor::from_floats(in[0], {n}, DType::f32), y = Tensor::empty({n}, DType::f32);
      op.fwd(x, y, {});
      return dot_loss(y.to_floats(), cot);
    };
    Tensor x = Tensor::from_floats(x0, {n}, DType::f32), dx = Tensor::empty({n}, DType::f32);
    op.bwd(x, Tensor::from_floats(cot_f, {n}, DType::f32), dx, {});
    test::expect_gradients_match_fd(loss, {x0}, {test::to_doubles(dx)}, op.name, 1e-2, 1e-2);
  }
}

TEST(Elementwise, SwigluBackwardMatchesFiniteDifferences) {
  const int64_t n = 301;
  const std::vector<float> gate = test::random_floats(n, 7, -4, 4);
  const std::vector<float> up = test::random_floats(n, 8, -2, 2);
  const std::vector<float> cot_f = test::random_floats(n, 9);
  const std::vector<double> cot(cot_f.begin(), cot_f.end());
  auto loss = [&](const std::vector<std::vector<float>>& in) {
    Tensor out = Tensor::empty({n}, DType::f32);
    kernels::swiglu_forward(Tensor::from_floats(in[0], {n}, DType::f32),
                            Tensor::from_floats(in[1], {n}, DType::f32), out);
    return dot_loss(out.to_floats(), cot);
  };
  Tensor dgate = Tensor::empty({n}, DType::f32), dup = Tensor::empty({n}, DType::f32);
  kernels::swiglu_backward(Tensor::from_floats(gate, {n}, DType::f32),
                           Tensor::from_floats(up, {n}, DType::f32),
                           Tensor::from_floats(cot_f, {n}, DType::f32), dgate, dup);
  test::expect_gradients_match_fd(
      loss, {gate, up}, {test::to_doubles(dgate), test::to_doubles(dup)}, "swiglu", 1e-2, 1e-2);
}

TEST(Elementwise, ActivationsSaturateAtExtremeInputs) {
  // Large |x|: x^3 and exp(-x) overflow in f32; results must still be the limits, never NaN.
  const std::vector<float> xs = {-3e38f, -1e20f, -1e4f, -100.f, 100.f, 1e4f, 1e20f, 3e38f};
  const int64_t n = static_cast<int64_t>(xs.size());
  Tensor x = Tensor::from_floats(xs, {n}, DType::f32);
  Tensor ones = Tensor::from_floats(std::vector<float>(xs.size(), 1.f), {n}, DType::f32);
  Tensor gy = Tensor::empty({n}, DType::f32), gdx = Tensor::empty({n}, DType::f32);
  Tensor sy = Tensor::empty({n}, DType::f32), sdx = Tensor::empty({n}, DType::f32);
  kernels::gelu_tanh_forward(x, gy);
  kernels::gelu_tanh_backward(x, ones, gdx);
  kernels::silu_forward(x, sy);
  kernels::silu_backward(x, ones, sdx);
  const auto gyv = gy.to_floats(), gdxv = gdx.to_floats(), syv = sy.to_floats(),
             sdxv = sdx.to_floats();
  for (size_t i = 0; i < xs.size(); ++i) {
    const bool pos = xs[i] > 0;
    EXPECT_EQ(gyv[i], pos ? xs[i] : 0.f) << "gelu(" << xs[i] << ")";
    EXPECT_EQ(gdxv[i], pos ? 1.f : 0.f) << "gelu'(" << xs[i] << ")";
    EXPECT_EQ(syv[i], pos ? xs[i] : 0.f) << "silu(" << xs[i] << ")";
    EXPECT_EQ(sdxv[i], pos ? 1.f : 0.f) << "silu'(" << xs[i] << ")";
  }
}

TEST(Elementwise, NaNPropagates) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const ElementwiseCase& c : test::elementwise_cases()) {
    std::vector<Tensor> in = random_inputs(c, {9}, DType::bf16, 31);
    in[0] = Tensor::from_floats({0.5f, nan, -1.f, 2.f, nan, 0.f, 1.f, -2.f, nan}, {9}, DType::bf16);
    std::vector<Tensor> out = poisoned_outputs(c, {9}, DType::bf16);
    c.run(in, out, {});
    for (int k = 0; k < c.n_out; ++k) {
      const auto v = out[k].to_floats();
      for (size_t i : {1, 4, 8})
        EXPECT_TRUE(std::isnan(v[i])) << c.name << " out" << k << " at " << i;
      for (size_t i : {0, 2, 3, 6, 7})
        EXPECT_FALSE(std::isnan(v[i])) << c.name << " out" << k << " at " << i;
    }
  }
}

template <typename E, typename F>
void expect_error(F&& f, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "expected an error mentioning " << parts[0];
  } catch (const E& e) {
    for (const std::string& p : parts)
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what() << " lacks " << p;
  }
}

TEST(Elementwise, BadArgumentsThrowTypedErrors) {
  Tensor a = Tensor::empty({7}, DType::f32), b8 = Tensor::empty({8}, DType::f32);
  Tensor out = Tensor::empty({7}, DType::f32);
  expect_error<ShapeError>([&] { kernels::add(a, b8, out); },
                           {"[add]", "f32[7] on cpu", "f32[8] on cpu", "shapes differ"});
  expect_error<ShapeError>([&] { kernels::gelu_tanh_forward(a, b8); },
                           {"[gelu_tanh_forward]", "f32[7] on cpu", "f32[8] on cpu"});
  Tensor h = Tensor::empty({7}, DType::bf16);
  expect_error<DTypeError>([&] { kernels::mul(a, h, out); },
                           {"[mul]", "f32[7] on cpu", "bf16[7] on cpu", "dtypes differ"});
  Tensor i = Tensor::empty({7}, DType::i32);
  expect_error<DTypeError>([&] { kernels::silu_forward(i, i); }, {"[silu_forward]", "i32[7]"});
  Tensor m = Tensor::empty({4, 6}, DType::f32);
  Tensor mt = m.transpose(0, 1), o = Tensor::empty({6, 4}, DType::f32);
  expect_error<ShapeError>([&] { kernels::scale(mt, 2.f, o); }, {"[scale]", "contiguous"});
  Tensor g = Tensor::empty({5}, DType::f32), dup = Tensor::empty({6}, DType::f32);
  expect_error<ShapeError>([&] { kernels::swiglu_backward(g, g, g, g, dup); },
                           {"[swiglu_backward]", "f32[5] on cpu", "f32[6] on cpu"});
  // A tensor claiming to live on a GPU (never dereferenced): the device check fires first.
  float dummy[7] = {};
  Tensor remote = Tensor::wrap(dummy, {7}, DType::f32, Device::cuda(0));
  expect_error<DeviceError>([&] { kernels::add(a, remote, out); },
                            {"[add]", "f32[7] on cpu", "f32[7] on cuda:0", "devices differ"});
  Tensor undefined;
  EXPECT_THROW(kernels::silu_backward(a, undefined, out), ValueError);
}

}  // namespace
}  // namespace zt
