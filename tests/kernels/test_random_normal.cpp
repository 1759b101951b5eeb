// The counter-based normals of kernels/philox.h and kernels::random_normal on the CPU:
// Philox4x32-10 against the published known answers, the float Box-Muller against a
// double-precision one, the distribution's moments, any range equal bitwise to that range of the
// whole (odd starts and ends, every dtype, any thread count), and the argument checks.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <numbers>
#include <vector>

#include "zerotrain/core/error.h"
#include "zerotrain/core/half.h"
#include "zerotrain/kernels/cpu/random_normal_chunk.h"
#include "zerotrain/kernels/philox.h"
#include "zerotrain/kernels/random_normal.h"

namespace zt {
namespace {

namespace px = kernels::philox;

std::vector<float> normals(uint64_t seed, uint64_t id, int64_t first, int64_t n, float std = 1.0f,
                           DType dtype = DType::f32) {
  Tensor t = Tensor::empty({n}, dtype);
  kernels::random_normal(t, seed, id, first, std);
  return t.to_floats();
}

bool same_bits(const float* a, const float* b, size_t n) {
  return n == 0 || std::memcmp(a, b, n * sizeof(float)) == 0;
}

// The known-answer vectors published with the Philox paper's reference implementation.
TEST(RandomNormal, PhiloxMatchesPublishedAnswers) {
  struct Case {
    px::Words counter;
    uint32_t k0, k1;
    px::Words want;
  };
  const Case cases[] = {
      {{{0, 0, 0, 0}}, 0, 0, {{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}}},
      {{{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}},
       0xffffffffu,
       0xffffffffu,
       {{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}}},
      {{{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}},
       0xa4093822u,
       0x299f31d0u,
       {{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}}},
  };
  for (const Case& c : cases) {
    const px::Words got = px::philox4x32_10(c.counter, c.k0, c.k1);
    for (int i = 0; i < 4; ++i)
      EXPECT_EQ(got.w[i], c.want.w[i])
          << "word " << i << " of counter " << std::hex << c.counter.w[0];
  }
}

// The polynomial ln and sin/cos against the math library in double, over words spread across the
// whole range (u near 2^-24 and near 1, every quarter turn and its edges).
TEST(RandomNormal, BoxMullerIsAccurate) {
  double worst = 0;
  for (uint64_t i = 0; i < 200000; ++i) {
    const auto a = static_cast<uint32_t>(i * 0x9E3779B97F4A7C15ull >> 32);
    const auto b = static_cast<uint32_t>((i * 0xBF58476D1CE4E5B9ull) >> 29);
    const uint32_t as[] = {a, static_cast<uint32_t>(i << 8), ~static_cast<uint32_t>(i << 8)};
    for (uint32_t aa : as) {
      float z0, z1;
      px::box_muller(aa, b, z0, z1);
      const double u = (static_cast<double>(aa >> 8) + 1.0) * 0x1.0p-24;
      const double r = std::sqrt(-2.0 * std::log(u));
      const double t = 2.0 * std::numbers::pi * static_cast<double>(b >> 8) * 0x1.0p-24;
      worst = std::max({worst, std::abs(z0 - r * std::cos(t)), std::abs(z1 - r * std::sin(t))});
    }
  }
  EXPECT_LT(worst, 4e-6);  // a few float ulps of |z| <= 5.77
}

TEST(RandomNormal, MomentsAreStandardNormal) {
  const int64_t n = 1 << 20;
  const std::vector<float> z = normals(1234, 99, 0, n);
  double s1 = 0, s2 = 0, s4 = 0, above2 = 0;
  for (float x : z) {
    s1 += x;
    s2 += double(x) * x;
    s4 += double(x) * x * x * x;
    above2 += std::abs(x) > 2.0f;
  }
  const double mean = s1 / n, var = s2 / n - mean * mean;
  EXPECT_NEAR(mean, 0.0, 5.0 / std::sqrt(double(n)));
  EXPECT_NEAR(var, 1.0, 0.01);
  EXPECT_NEAR(s4 / n, 3.0, 0.05);
  EXPECT_NEAR(above2 / n, 0.0455, 0.002);
  // A scale is one rounded product: std x z.
  const std::vector<float> scaled = normals(1234, 99, 0, 1000, 0.02f);
  for (size_t i = 0; i < scaled.size(); ++i)
    ASSERT_EQ(scaled[i], 0.02f * z[i]) << i;
}

TEST(RandomNormal, StreamsDiffer) {
  const std::vector<float> a = normals(1, 2, 0, 64), b = normals(1, 3, 0, 64),
                           c = normals(2, 2, 0, 64);
  EXPECT_FALSE(same_bits(a.data(), b.data(), 64));
  EXPECT_FALSE(same_bits(a.data(), c.data(), 64));
  // A stream id or seed past 32 bits counts too.
  const std::vector<float> d = normals(1, 2 + (uint64_t{1} << 40), 0, 64),
                           e = normals(1 + (uint64_t{1} << 40), 2, 0, 64);
  EXPECT_FALSE(same_bits(a.data(), d.data(), 64));
  EXPECT_FALSE(same_bits(a.data(), e.data(), 64));
}

TEST(RandomNormal, RangesEqualTheWholeBitwise) {
  const int64_t n = 103;
  const std::vector<float> all = normals(7, 11, 0, n);
  for (int64_t b : {0, 1, 2, 3, 4, 5, 50, 99, 102})
    for (int64_t e : {b + 1, b + 2, b + 3, b + 7, n}) {
      if (e > n) continue;
      const std::vector<float> part = normals(7, 11, b, e - b);
      EXPECT_TRUE(same_bits(part.data(), all.data() + b, size_t(e - b))) << "[" << b << ", " << e;
    }
  // Far into a stream (past 2^32 elements): the block's high counter word.
  const int64_t far = (int64_t{1} << 34) + 3;
  const std::vector<float> tail = normals(7, 11, far, 9);
  const std::vector<float> tail2 = normals(7, 11, far + 1, 8);
  EXPECT_TRUE(same_bits(tail.data() + 1, tail2.data(), 8));
  EXPECT_FALSE(same_bits(tail.data(), all.data(), 9));
}

TEST(RandomNormal, HalfTypesAreTheRoundedF32Values) {
  const std::vector<float> f = normals(3, 4, 5, 1001, 0.02f);
  const std::vector<float> h = normals(3, 4, 5, 1001, 0.02f, DType::f16);
  const std::vector<float> b = normals(3, 4, 5, 1001, 0.02f, DType::bf16);
  for (size_t i = 0; i < f.size(); ++i) {
    ASSERT_EQ(h[i], f16::to_float(f16::from_float(f[i]))) << i;
    ASSERT_EQ(b[i], bf16::to_float(bf16::from_float(f[i]))) << i;
  }
}

TEST(RandomNormal, ThreadCountDoesNotMatter) {
  const int64_t n = 3 * 4096 * 4 + 17;
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const std::vector<float> one = normals(9, 8, 3, n);
  omp_set_num_threads(5);
  const std::vector<float> five = normals(9, 8, 3, n);
  omp_set_num_threads(threads);
  EXPECT_TRUE(same_bits(one.data(), five.data(), size_t(n)));
}

// Every instruction set this CPU has gives the baseline's bits (and the per-block reference's).
TEST(RandomNormal, EveryInstructionSetMatchesTheBaseline) {
  constexpr int64_t m = kernels::cpu::kNormalChunkBlocks;
  std::vector<float> want(4 * m), got(4 * m);
  int checked = 0;
  for (kernels::cpu::NormalChunkFn f :
       {kernels::cpu::normal_chunk_avx2(), kernels::cpu::normal_chunk_avx512()}) {
    if (!f) continue;
    ++checked;
    for (uint64_t block0 : {uint64_t{0}, uint64_t{12345}, (uint64_t{1} << 32) - 7})
      for (uint64_t seed : {uint64_t{0}, uint64_t{1234}, ~uint64_t{0}}) {
        kernels::cpu::normal_chunk_baseline(seed, 77, block0, 0.5f, want.data());
        f(seed, 77, block0, 0.5f, got.data());
        ASSERT_TRUE(same_bits(want.data(), got.data(), want.size())) << block0 << " " << seed;
        for (int64_t j = 0; j < m; ++j) {
          float z[4];
          px::normal_block(seed, 77, block0 + uint64_t(j), z);
          for (int lane = 0; lane < 4; ++lane)
            ASSERT_EQ(want[lane * m + j], px::mul_rn(0.5f, z[lane])) << j << " " << lane;
        }
      }
  }
  std::printf("[ isa     ] %d wider instruction set(s) checked against the baseline\n", checked);
}

TEST(RandomNormal, RejectsBadArguments) {
  Tensor ints = Tensor::empty({4}, DType::i32);
  EXPECT_THROW(kernels::random_normal(ints, 1, 1, 0, 1.0f), DTypeError);
  Tensor f = Tensor::empty({4, 4}, DType::f32);
  Tensor strided = f.transpose(0, 1);
  EXPECT_THROW(kernels::random_normal(strided, 1, 1, 0, 1.0f), ShapeError);
  Tensor ok = Tensor::empty({4}, DType::f32);
  EXPECT_THROW(kernels::random_normal(ok, 1, 1, -1, 1.0f), ValueError);
  EXPECT_THROW(kernels::random_normal(ok, 1, 1, INT64_MAX - 2, 1.0f), ValueError);
  Tensor empty = Tensor::empty({0}, DType::f32);
  EXPECT_NO_THROW(kernels::random_normal(empty, 1, 1, 5, 1.0f));
}

}  // namespace
}  // namespace zt
