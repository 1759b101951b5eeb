// Sizes that cannot wrap: checked_mul / checked_add / checked_product at the int64 edge, and the
// tensor sizes built on them (numel_of, Tensor::empty) refusing shapes past 2^63 elements or bytes
// instead of wrapping to a small or empty allocation.
#include <gtest/gtest.h>

#include <limits>

#include "zerotrain/core/checked_math.h"
#include "zerotrain/core/error.h"
#include "zerotrain/core/tensor.h"

namespace zt {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

TEST(CheckedMath, ProductsAndSumsAtTheEdge) {
  EXPECT_EQ(checked_mul(3, 4), 12);
  EXPECT_EQ(checked_mul(kMax, 1), kMax);
  EXPECT_EQ(checked_mul(int64_t(1) << 62, 2), std::nullopt);
  EXPECT_EQ(checked_mul(int64_t(1) << 62, 4), std::nullopt);  // wraps to exactly 0 unchecked
  EXPECT_EQ(checked_mul(-1, 5), std::nullopt);
  EXPECT_EQ(checked_add(kMax, 0), kMax);
  EXPECT_EQ(checked_add(kMax, 1), std::nullopt);
  EXPECT_EQ(checked_product({2, 3, 7}), 42);
  EXPECT_EQ(checked_product({int64_t(1) << 59, 32, 4}), std::nullopt);
  EXPECT_EQ(checked_product({}), 1);
}

TEST(CheckedMath, NumelPast63BitsIsAShapeError) {
  EXPECT_EQ(numel_of({int64_t(1) << 31, int64_t(1) << 31}), int64_t(1) << 62);
  try {
    numel_of({int64_t(1) << 62, 4});
    FAIL() << "a wrapped numel was accepted";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("[4611686018427387904, 4]"), std::string::npos)
        << e.what();
  }
}

TEST(CheckedMath, TensorBytesPast63BitsAreRefusedBeforeAllocating) {
  // 2^61 f32 elements are 2^63 bytes: one past int64; unchecked, the byte count wraps negative.
  try {
    Tensor::empty({int64_t(1) << 61}, DType::f32, Device::cpu());
    FAIL() << "a wrapped byte count was accepted";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("more than 2^63 bytes"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace zt
