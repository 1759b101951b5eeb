// CPU cast between f32, f16 and bf16: all nine pairs at odd lengths against core/half.h bit for
// bit, the special values (NaN, inf, signed zero, subnormals, ties, f16 overflow) spelled out,
// cast_to's no-copy rule, and the front-end's errors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "kernels/reference_cast.h"
#include "support/test_util.h"
#include "zerotrain/kernels/cast.h"

namespace zt {
namespace {

constexpr DType kTypes[] = {DType::f32, DType::f16, DType::bf16};

TEST(CastCpu, AllPairsMatchHalfHBitForBit) {
  for (size_t n : {size_t{1}, size_t{37}, size_t{1037}, size_t{100003}}) {
    const std::vector<float> values = test::cast_inputs(n, 11 + n);
    for (DType from : kTypes)
      for (DType to : kTypes) {
        const Tensor src = test::host_tensor(values, from);
        Tensor dst = Tensor::empty({static_cast<int64_t>(n)}, to);
        kernels::cast(src, dst);
        EXPECT_EQ(test::element_bits(dst), test::expected_cast_bits(src, to))
            << dtype_name(from) << " -> " << dtype_name(to) << " n=" << n;
      }
  }
}

uint16_t cast_one(float f, DType to) {
  Tensor src = Tensor::from_floats({f}, {1}, DType::f32);
  Tensor dst = Tensor::empty({1}, to);
  kernels::cast(src, dst);
  return test::element_bits(dst)[0];
}

TEST(CastCpu, SpecialValues) {
  using test::float_from_bits;
  // Round to nearest, ties to even.
  EXPECT_EQ(cast_one(1.0f + 1.0f / 256, DType::bf16), 0x3f80);
  EXPECT_EQ(cast_one(1.0f + 3.0f / 256, DType::bf16), 0x3f82);
  EXPECT_EQ(cast_one(1.0f + 1.0f / 2048, DType::f16), 0x3c00);
  EXPECT_EQ(cast_one(1.0f + 3.0f / 2048, DType::f16), 0x3c02);
  // f16 overflow and the largest finite value.
  EXPECT_EQ(cast_one(65504.0f, DType::f16), 0x7bff);
  EXPECT_EQ(cast_one(65520.0f, DType::f16), 0x7c00);
  EXPECT_EQ(cast_one(-1e9f, DType::f16), 0xfc00);
  EXPECT_EQ(cast_one(3.0e38f * 1.2f, DType::bf16), 0x7f80);  // rounds up to inf
  // Subnormals: the smallest f16 subnormal, the half-way point below it, f32 subnormals in bf16.
  EXPECT_EQ(cast_one(std::ldexp(1.0f, -24), DType::f16), 0x0001);
  EXPECT_EQ(cast_one(std::ldexp(1.0f, -25), DType::f16), 0x0000);
  EXPECT_EQ(cast_one(std::ldexp(1.5f, -25), DType::f16), 0x0001);
  EXPECT_EQ(cast_one(-std::ldexp(3.0f, -24), DType::f16), 0x8003);
  EXPECT_EQ(cast_one(float_from_bits(0x00010000u), DType::bf16), 0x0001);
  // Signed zero, infinities, NaN (quiet, sign kept).
  EXPECT_EQ(cast_one(-0.0f, DType::f16), 0x8000);
  EXPECT_EQ(cast_one(-0.0f, DType::bf16), 0x8000);
  EXPECT_EQ(cast_one(-INFINITY, DType::bf16), 0xff80);
  EXPECT_EQ(cast_one(INFINITY, DType::f16), 0x7c00);
  EXPECT_EQ(cast_one(float_from_bits(0xff800001u), DType::f16), 0xfe00);
  EXPECT_EQ(cast_one(float_from_bits(0x7f800001u), DType::bf16), 0x7fc0);
  // 16-bit to f32 is exact, subnormal f16 included.
  Tensor h = Tensor::empty({2}, DType::f16);
  h.data_as<f16>()[0].bits = 0x0001;
  h.data_as<f16>()[1].bits = 0xfe00;
  Tensor f = kernels::cast_to(h, DType::f32);
  EXPECT_EQ(f.to_floats()[0], std::ldexp(1.0f, -24));
  EXPECT_TRUE(std::isnan(f.to_floats()[1]));
}

TEST(CastCpu, CastToReturnsSourceWhenDtypeMatches) {
  Tensor src = test::random_tensor({3, 5}, DType::bf16, 4);
  Tensor same = kernels::cast_to(src, DType::bf16);
  EXPECT_EQ(same.data(), src.data());
  Tensor wide = kernels::cast_to(src, DType::f32);
  EXPECT_EQ(wide.shape(), src.shape());
  EXPECT_EQ(wide.dtype(), DType::f32);
  EXPECT_EQ(wide.to_floats(), src.to_floats());
}

TEST(CastCpu, SameDtypeCopiesAndShapesMayDiffer) {
  Tensor src = test::random_tensor({2, 6}, DType::f16, 5);
  Tensor dst = Tensor::empty({3, 4}, DType::f16);
  kernels::cast(src, dst);
  test::expect_bitwise_equal(src.view({12}), dst.view({12}), "f16 -> f16 copy");
}

TEST(CastCpu, ErrorsNameTheOpAndTensors) {
  Tensor src = Tensor::empty({2, 3}, DType::f32);
  Tensor dst = Tensor::empty({7}, DType::bf16);
  try {
    kernels::cast(src, dst);
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("[cast] src f32[2, 3] on cpu and dst bf16[7] on cpu"), std::string::npos)
        << msg;
  }
  Tensor ints = Tensor::empty({6}, DType::i32);
  EXPECT_THROW(kernels::cast(src, ints), DTypeError);
  EXPECT_THROW(kernels::cast_to(ints, DType::f32), DTypeError);
  Tensor strided = Tensor::empty({3, 2}, DType::f32).transpose(0, 1);
  Tensor out = Tensor::empty({6}, DType::f16);
  EXPECT_THROW(kernels::cast(strided, out), ShapeError);
  Tensor buf = Tensor::empty({8}, DType::f32);
  Tensor halves = Tensor::wrap(buf.data(), {8}, DType::bf16, Device::cpu());
  EXPECT_THROW(kernels::cast(buf, halves), ValueError);
}

}  // namespace
}  // namespace zt
