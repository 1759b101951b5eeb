// CPU rotary position embedding: forward and backward against the float64 reference
// (reference_rope.h) for f32/f16/bf16, odd half-widths and i32/i64 positions; backward against
// finite differences and as the exact inverse of the forward; the Hugging Face rounding order for
// bf16; in-place use; per-row positions of packed rows; rope_inv_freq; argument errors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/reference_rope.h"
#include "support/test_util.h"
#include "zerotrain/kernels/rope.h"

namespace zt {
namespace {

using kernels::rope_backward;
using kernels::rope_forward;
using kernels::rope_inv_freq;

constexpr DType kDTypes[] = {DType::f32, DType::f16, DType::bf16};

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

struct RopeShape {
  int64_t b, s, h, d;
};
constexpr RopeShape kShapes[] = {
    {2, 5, 3, 8}, {1, 7, 2, 2}, {2, 3, 3, 6}, {1, 4, 4, 128}, {2, 3, 2, 34}};

// Positions that are not 0..S-1: random, with one large value (long-context angles).
std::vector<int64_t> test_positions(int64_t s, uint64_t seed) {
  std::vector<int64_t> p = test::random_ints({s}, DType::i64, seed, 0, 8192).to_ints();
  p[0] = 131071;
  return p;
}

TEST(RopeCpu, ForwardAndBackwardMatchReference) {
  for (DType dt : kDTypes) {
    for (const RopeShape& sh : kShapes) {
      for (DType pt : {DType::i32, DType::i64}) {
        const auto pos = test_positions(sh.s, 100 + sh.d);
        Tensor positions = Tensor::from_ints(pos, {sh.s}, pt);
        Tensor inv = rope_inv_freq(sh.d, 10000.0);
        Tensor x = test::random_tensor({sh.b, sh.s, sh.h, sh.d}, dt, 101 + sh.d);
        Tensor y = Tensor::empty(x.shape(), dt), dx = Tensor::empty(x.shape(), dt);
        rope_forward(x, positions, inv, y);
        rope_backward(x, positions, inv, dx);
        const auto xd = test::to_doubles(x);
        const auto invf = inv.to_floats();
        const std::string what =
            str(dtype_name(dt), " ", to_string(x.shape()), " positions ", dtype_name(pt));
        test::expect_close(test::rope_ref(xd, pos, invf, sh.b, sh.s, sh.h, sh.d), y,
                           test::tolerance_for(dt), "forward " + what);
        test::expect_close(test::rope_ref(xd, pos, invf, sh.b, sh.s, sh.h, sh.d, -1.0), dx,
                           test::tolerance_for(dt), "backward " + what);
      }
    }
  }
}

// Per-row positions [B, S] (packed rows restart them at each document): each row rotates exactly
// as the same row alone with its own [S] positions, and as the float64 reference.
TEST(RopeCpu, PerRowPositionsRotateEachRowByItsOwn) {
  for (DType dt : kDTypes) {
    const int64_t B = 3, S = 6, H = 2, D = 10;
    const std::vector<int64_t> pos = {0, 1, 2, 0, 1, 0, 0, 1, 2, 3, 4, 5, 0, 0, 1, 2, 0, 131071};
    const Tensor positions = Tensor::from_ints(pos, {B, S}, DType::i32);
    const Tensor inv = rope_inv_freq(D, 10000.0);
    const Tensor x = test::random_tensor({B, S, H, D}, dt, 31);
    for (bool backward : {false, true}) {
      Tensor y = Tensor::empty(x.shape(), dt);
      if (backward)
        rope_backward(x, positions, inv, y);
      else
        rope_forward(x, positions, inv, y);
      for (int64_t b = 0; b < B; ++b) {
        const std::vector<int64_t> row_pos(pos.begin() + b * S, pos.begin() + (b + 1) * S);
        const Tensor xb = x.slice(0, b, b + 1).contiguous();
        Tensor yb = Tensor::empty(xb.shape(), dt);
        const Tensor pb = Tensor::from_ints(row_pos, {S}, DType::i64);
        if (backward)
          rope_backward(xb, pb, inv, yb);
        else
          rope_forward(xb, pb, inv, yb);
        EXPECT_EQ(yb.to_floats(), y.slice(0, b, b + 1).contiguous().to_floats())
            << dtype_name(dt) << " row " << b << (backward ? " backward" : " forward");
        test::expect_close(test::rope_ref(test::to_doubles(xb), row_pos, inv.to_floats(), 1, S, H,
                                          D, backward ? -1.0 : 1.0),
                           yb, test::tolerance_for(dt), str(dtype_name(dt), " row ", b));
      }
    }
  }
  const Tensor x = test::random_tensor({2, 3, 1, 4}, DType::f32, 1);
  Tensor y = Tensor::empty(x.shape(), DType::f32);
  expect_error<ShapeError>(
      [&] {
        rope_forward(x, Tensor::from_ints({0, 1, 2}, {1, 3}, DType::i32), rope_inv_freq(4, 1e4), y);
      },
      {"positions", "[B, S]"});
}

TEST(RopeCpu, BackwardInvertsForward) {
  for (const RopeShape& sh : kShapes) {
    Tensor positions = Tensor::from_ints(test_positions(sh.s, 200), {sh.s}, DType::i64);
    Tensor inv = rope_inv_freq(sh.d, 500000.0);
    Tensor x = test::random_tensor({sh.b, sh.s, sh.h, sh.d}, DType::f32, 201);
    Tensor y = Tensor::empty(x.shape(), DType::f32), back = Tensor::empty(x.shape(), DType::f32);
    rope_forward(x, positions, inv, y);
    rope_backward(y, positions, inv, back);
    test::expect_close(test::to_doubles(x), back, {1e-6, 0}, "inverse " + to_string(x.shape()));
  }
}

TEST(RopeCpu, BackwardMatchesFiniteDifferences) {
  const RopeShape sh{2, 3, 2, 10};
  Tensor positions = Tensor::from_ints(test_positions(sh.s, 300), {sh.s}, DType::i32);
  Tensor inv = rope_inv_freq(sh.d, 10000.0);
  Tensor x = test::random_tensor({sh.b, sh.s, sh.h, sh.d}, DType::f32, 301);
  Tensor cot = test::random_tensor(x.shape(), DType::f32, 302);
  const auto cotd = test::to_doubles(cot);
  auto loss = [&](const std::vector<std::vector<float>>& in) {
    Tensor xi = Tensor::from_floats(in[0], x.shape(), DType::f32),
           y = Tensor::empty(x.shape(), DType::f32);
    rope_forward(xi, positions, inv, y);
    return test::dot(test::to_doubles(y), cotd);
  };
  Tensor dx = Tensor::empty(x.shape(), DType::f32);
  rope_backward(cot, positions, inv, dx);
  test::expect_gradients_match_fd(loss, {x.to_floats()}, {test::to_doubles(dx)}, "rope fd");
}

// HF: cos/sin computed in f32, cast to bf16, then q * cos + rotate_half(q) * sin in bf16 ops.
TEST(RopeCpu, Bf16FollowsHuggingFaceRoundingOrder) {
  const RopeShape sh{1, 16, 2, 64};
  const auto pos = test_positions(sh.s, 400);
  Tensor positions = Tensor::from_ints(pos, {sh.s}, DType::i64);
  Tensor inv = rope_inv_freq(sh.d, 10000.0);
  Tensor x = test::random_tensor({sh.b, sh.s, sh.h, sh.d}, DType::bf16, 401, -4.0f, 4.0f);
  Tensor y = Tensor::empty(x.shape(), DType::bf16);
  rope_forward(x, positions, inv, y);
  const auto xs = x.to_floats(), ys = y.to_floats(), invf = inv.to_floats();
  auto r = [](float v) { return static_cast<float>(bf16(v)); };
  size_t unrounded_trig_differs = 0;
  const int64_t half = sh.d / 2;
  for (int64_t s = 0; s < sh.s; ++s)
    for (int64_t h = 0; h < sh.h; ++h)
      for (int64_t i = 0; i < half; ++i) {
        const float a =
            static_cast<float>(pos[static_cast<size_t>(s)]) * invf[static_cast<size_t>(i)];
        const float c = r(std::cos(a)), sn = r(std::sin(a));
        const size_t o = static_cast<size_t>((s * sh.h + h) * sh.d + i),
                     o2 = o + static_cast<size_t>(half);
        const float y1 = r(r(xs[o] * c) - r(xs[o2] * sn)), y2 = r(r(xs[o2] * c) + r(xs[o] * sn));
        ASSERT_EQ(ys[o], y1) << "s " << s << " h " << h << " i " << i;
        ASSERT_EQ(ys[o2], y2) << "s " << s << " h " << h << " i " << i;
        if (r(xs[o] * std::cos(a) - xs[o2] * std::sin(a)) != y1) ++unrounded_trig_differs;
      }
  EXPECT_GT(unrounded_trig_differs, 0u) << "the test cannot tell the orders apart";
}

TEST(RopeCpu, InPlaceMatchesOutOfPlace) {
  for (DType dt : kDTypes) {
    const RopeShape sh{2, 4, 3, 16};
    Tensor positions = Tensor::from_ints(test_positions(sh.s, 500), {sh.s}, DType::i32);
    Tensor inv = rope_inv_freq(sh.d, 10000.0);
    Tensor x = test::random_tensor({sh.b, sh.s, sh.h, sh.d}, dt, 501);
    Tensor y = Tensor::empty(x.shape(), dt), z = x.clone();
    rope_forward(x, positions, inv, y);
    rope_forward(z, positions, inv, z);
    test::expect_bitwise_equal(y, z, str("in-place forward ", dtype_name(dt)));
    rope_backward(y, positions, inv, y);
    rope_backward(z, positions, inv, z);
    test::expect_bitwise_equal(y, z, str("in-place backward ", dtype_name(dt)));
  }
}

TEST(RopeCpu, InvFreqMatchesDefinition) {
  for (double theta : {10000.0, 500000.0, 1000000.0}) {
    for (int64_t d : {2, 64, 128}) {
      Tensor inv = rope_inv_freq(d, theta);
      ASSERT_EQ(inv.shape(), (Shape{d / 2}));
      ASSERT_EQ(inv.dtype(), DType::f32);
      std::vector<double> ref;
      for (int64_t i = 0; i < d / 2; ++i)
        ref.push_back(1.0 / std::pow(theta, 2.0 * static_cast<double>(i) / static_cast<double>(d)));
      test::expect_close(ref, inv, {0, 2e-6}, str("inv_freq d ", d, " theta ", theta));
      EXPECT_EQ(inv.to_floats()[0], 1.0f);
    }
  }
  expect_error<ValueError>([] { rope_inv_freq(7, 10000.0); }, {"[rope_inv_freq]", "7"});
  expect_error<ValueError>([] { rope_inv_freq(8, 0.0); }, {"[rope_inv_freq]", "theta"});
}

TEST(RopeCpu, BadArgumentsThrowTypedErrors) {
  Tensor x = test::random_tensor({2, 3, 4, 8}, DType::bf16, 601);
  Tensor pos = Tensor::from_ints({0, 1, 2}, {3}, DType::i64);
  Tensor inv = rope_inv_freq(8, 10000.0);
  Tensor y = Tensor::empty({2, 3, 4, 8}, DType::bf16);
  expect_error<ShapeError>(
      [&] {
        Tensor bad = Tensor::from_ints({0, 1}, {2}, DType::i64);
        rope_forward(x, bad, inv, y);
      },
      {"[rope_forward]", "positions i64[2]", "x bf16[2, 3, 4, 8]"});
  expect_error<ShapeError>([&] { rope_forward(x, pos, rope_inv_freq(6, 1e4), y); },
                           {"[rope_forward]", "inv_freq f32[3]", "x bf16[2, 3, 4, 8]"});
  expect_error<ShapeError>(
      [&] {
        Tensor bad = Tensor::empty({2, 3, 4, 6}, DType::bf16);
        rope_forward(x, pos, inv, bad);
      },
      {"[rope_forward]", "x bf16[2, 3, 4, 8]", "y bf16[2, 3, 4, 6]"});
  expect_error<ShapeError>(
      [&] {
        Tensor odd = Tensor::empty({2, 3, 4, 7}, DType::bf16);
        rope_backward(odd, pos, inv, odd);
      },
      {"[rope_backward]", "dy bf16[2, 3, 4, 7]", "even"});
  expect_error<ShapeError>(
      [&] {
        Tensor flat = Tensor::empty({6, 32}, DType::bf16);
        rope_forward(flat, pos, inv, flat);
      },
      {"[rope_forward]", "x bf16[6, 32]", "4 dimensions"});
  expect_error<DTypeError>(
      [&] {
        Tensor bad = Tensor::from_floats({0, 1, 2}, {3}, DType::f32);
        rope_forward(x, bad, inv, y);
      },
      {"[rope_forward]", "positions f32[3]"});
  expect_error<DTypeError>(
      [&] {
        Tensor bad = Tensor::from_floats({1, 1, 1, 1}, {4}, DType::bf16);
        rope_forward(x, pos, bad, y);
      },
      {"[rope_forward]", "inv_freq bf16[4]"});
  expect_error<DTypeError>(
      [&] {
        Tensor bad = Tensor::empty({2, 3, 4, 8}, DType::f32);
        rope_forward(x, pos, inv, bad);
      },
      {"[rope_forward]", "x bf16[2, 3, 4, 8]", "y f32[2, 3, 4, 8]"});
  expect_error<ValueError>(
      [&] {
        Tensor buf = Tensor::empty({2 * 3 * 4 * 8 + 8}, DType::bf16);
        Tensor a = buf.slice(0, 0, 192).view({2, 3, 4, 8}),
               b = buf.slice(0, 8, 200).view({2, 3, 4, 8});
        rope_forward(a, pos, inv, b);
      },
      {"[rope_forward]", "partially overlaps"});
  std::vector<float> storage(4);
  Tensor inv_gpu = Tensor::wrap(storage.data(), {4}, DType::f32, Device::cuda(0));
  expect_error<DeviceError>([&] { rope_forward(x, pos, inv_gpu, y); },
                            {"[rope_forward]", "on cuda:0", "on cpu"});
}

}  // namespace
}  // namespace zt
