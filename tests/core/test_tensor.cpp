// Tensor views, copies, dtype conversion and error messages (CPU), plus cross-device copies (CUDA).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "support/test_util.h"
#include "zerotrain/core/tensor.h"

namespace zt {
namespace {

TEST(Tensor, EmptyHasShapeStridesAndBytes) {
  Tensor t = Tensor::empty({2, 3, 4}, DType::bf16);
  EXPECT_TRUE(t.defined());
  EXPECT_EQ(t.numel(), 24);
  EXPECT_EQ(t.nbytes(), 48u);
  EXPECT_EQ(t.strides(), (Shape{12, 4, 1}));
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.describe(), "bf16[2, 3, 4] on cpu");
}

TEST(Tensor, ViewsShareStorage) {
  Tensor t = Tensor::from_floats({0, 1, 2, 3, 4, 5}, {2, 3}, DType::f32);
  Tensor tt = t.transpose(0, 1);
  EXPECT_FALSE(tt.is_contiguous());
  EXPECT_EQ(tt.contiguous().to_floats(), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  Tensor s = t.slice(1, 1, 3);
  EXPECT_EQ(s.to_floats(), (std::vector<float>{1, 2, 4, 5}));
  Tensor row = t.select(0, 1);
  EXPECT_EQ(row.to_floats(), (std::vector<float>{3, 4, 5}));
  t.view({3, 2}).data_as<float>()[0] = 42.f;
  EXPECT_EQ(t.to_floats()[0], 42.f);
  EXPECT_EQ(t.view({-1}).shape(), (Shape{6}));
}

TEST(Tensor, BadViewsThrowWithShapes) {
  Tensor t = Tensor::empty({2, 3}, DType::f32);
  try {
    t.view({4, 2});
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("[tensor] view [4, 2] of f32[2, 3] on cpu"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(t.transpose(0, 1).view({6}), ShapeError);
  EXPECT_THROW(t.slice(1, 2, 5), ShapeError);
  EXPECT_THROW(t.data_as<bf16>(), DTypeError);
  EXPECT_THROW(Tensor::empty({-1}, DType::f32), ShapeError);
}

TEST(Tensor, Bf16AndF16RoundTrip) {
  // Exhaustive over all finite 16-bit patterns: decode then encode is the identity.
  for (uint32_t b = 0; b < 65536; ++b) {
    const uint16_t bits = static_cast<uint16_t>(b);
    const float fb = bf16::to_float(bits);
    if (std::isfinite(fb)) {
      ASSERT_EQ(bf16::from_float(fb), bits) << b;
    }
    const float fh = f16::to_float(bits);
    if (std::isfinite(fh)) {
      ASSERT_EQ(f16::from_float(fh), bits) << b;
    }
  }
}

TEST(Tensor, F16RoundsToNearestEven) {
  // Compare against the compiler's own _Float16 conversion on many random floats, subnormals too.
  auto vals = test::random_floats(200000, 7, -70000.f, 70000.f);
  auto small = test::random_floats(200000, 8, -1e-4f, 1e-4f);
  vals.insert(vals.end(), small.begin(), small.end());
  for (float f : vals) {
    _Float16 h = static_cast<_Float16>(f);
    uint16_t want;
    std::memcpy(&want, &h, 2);
    ASSERT_EQ(f16::from_float(f), want) << f;
  }
  EXPECT_EQ(bf16::from_float(1.0f + 1.0f / 256), bf16::from_float(1.0f));  // tie -> even
  EXPECT_EQ(bf16::to_float(bf16::from_float(3.14159f)), 3.140625f);
}

TEST(Tensor, FillAndConvert) {
  Tensor t = Tensor::empty({5}, DType::bf16);
  t.fill(0.5);
  EXPECT_EQ(t.to_floats(), (std::vector<float>(5, 0.5f)));
  Tensor i = Tensor::from_ints({1, -2, 3}, {3}, DType::i64);
  EXPECT_EQ(i.to_ints(), (std::vector<int64_t>{1, -2, 3}));
}

TEST(Tensor, CudaRoundTripAndStridedCopy) {
  ZT_SKIP_WITHOUT_CUDA();
  Tensor h = test::random_tensor({4, 5, 6}, DType::bf16, 3);
  Tensor d = h.to(Device::cuda(0));
  EXPECT_EQ(d.device(), Device::cuda(0));
  test::expect_bitwise_equal(h, d, "host -> cuda -> host");
  Tensor dt = d.transpose(0, 2).contiguous();
  test::expect_bitwise_equal(h.transpose(0, 2).contiguous(), dt, "strided copy on device");
  Tensor z = Tensor::zeros({7}, DType::f32, Device::cuda(0));
  z.fill(2.5);
  EXPECT_EQ(z.to_floats(), std::vector<float>(7, 2.5f));
}

TEST(Tensor, NoCudaBuildThrowsDeviceError) {
  if (cuda_available()) GTEST_SKIP() << "CUDA present";
  EXPECT_THROW(Tensor::empty({2}, DType::f32, Device::cuda(0)), DeviceError);
}

}  // namespace
}  // namespace zt
