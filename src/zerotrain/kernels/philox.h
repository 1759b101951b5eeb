// The counter-based generator of the seeded init, written once for the host and the device:
// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011) and a
// Box-Muller transform evaluated with correctly rounded float operations only, so element i of a
// stream is a pure function of (seed, stream, i), bitwise the same on every CPU, GPU, thread count
// and slice ([Note: counter-based normals]). Used by kernels/random_normal.h; tested by
// tests/kernels/test_random_normal.cpp (published Philox answers, the transform's accuracy, slices)
// and test_random_normal_cuda.cpp (the device bitwise equal to the host).
//
// [Note: counter-based normals]
// Element i of the stream (seed, stream) is lane i % 4 of block i / 4. A block is one Philox call:
// counter (i / 4 low, i / 4 high, stream low, stream high), key (seed low, seed high), giving four
// 32-bit words; words 0 and 1 make the normals of lanes 0 and 1 (r cos t, r sin t), words 2 and 3
// those of lanes 2 and 3. With a word's top 24 bits k: u = (k + 1) 2^-24 in (0, 1] for the radius
// r = sqrt(-2 ln u) (so |z| <= 5.77), and t = 2 pi k 2^-24 for the angle. ln and sin/cos are
// polynomials here, not the math library: libm and CUDA's functions differ in their last bits, and
// every operation below is one IEEE-rounded float +, -, x, / or sqrt (on the device through the
// _rn intrinsics, which the compiler never fuses into an fma; on the host in translation units
// built with -ffp-contract=off), so both give the same bits. The polynomials are accurate to a few
// float ulps, far below what an init needs.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define ZT_PHILOX_FN __host__ __device__ __forceinline__
#else
// Always inlined: the per-ISA translation units of kernels/cpu/random_normal_chunk.h must not share
// one out-of-line copy built for another instruction set.
#define ZT_PHILOX_FN inline __attribute__((always_inline))
#endif

namespace zt::kernels::philox {

struct Words {
  uint32_t w[4];
};

// Philox4x32's multipliers and Weyl key increments (from the paper).
inline constexpr uint32_t kMul0 = 0xD2511F53u;
inline constexpr uint32_t kMul1 = 0xCD9E8D57u;
inline constexpr uint32_t kWeyl0 = 0x9E3779B9u;
inline constexpr uint32_t kWeyl1 = 0xBB67AE85u;

// Ten rounds of Philox4x32 on `counter` under the key (k0, k1).
ZT_PHILOX_FN Words philox4x32_10(Words counter, uint32_t k0, uint32_t k1) {
  uint32_t c0 = counter.w[0], c1 = counter.w[1], c2 = counter.w[2], c3 = counter.w[3];
#if defined(__CUDACC__)
#pragma unroll
#else
#pragma GCC unroll 10
#endif
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = static_cast<uint64_t>(kMul0) * c0;
    const uint64_t p1 = static_cast<uint64_t>(kMul1) * c2;
    const auto hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
    const auto hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += kWeyl0;
    k1 += kWeyl1;
  }
  return {{c0, c1, c2, c3}};
}

// IEEE float operations, each rounded once (never contracted into an fma on the device).
ZT_PHILOX_FN float add_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
ZT_PHILOX_FN float mul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
ZT_PHILOX_FN float div_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}
ZT_PHILOX_FN float sqrt_rn(float a) {
#if defined(__CUDA_ARCH__)
  return __fsqrt_rn(a);
#else
  return __builtin_sqrtf(a);
#endif
}
ZT_PHILOX_FN uint32_t bits_of(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
#endif
}
ZT_PHILOX_FN float float_of(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
#endif
}

// ln(u) for a normal u > 0: u = m 2^e with m in [sqrt(1/2), sqrt(2)), ln m = 2 atanh(s) with
// s = (m - 1) / (m + 1), |s| < 0.172, as the odd series s + s^3/3 + ... + s^9/9 (next: < 4e-10).
ZT_PHILOX_FN float log_positive(float u) {
  const uint32_t b = bits_of(u);
  const float m1 = float_of((b & 0x7FFFFFu) | 0x3F800000u);  // [1, 2)
  // Both sides computed, then selected: no branch, so host SIMD loops stay vectorized.
  const bool halve = m1 > 1.41421356f;
  const float m_half = mul_rn(m1, 0.5f);
  const float m = halve ? m_half : m1;
  const int e = static_cast<int>(b >> 23) - 127 + (halve ? 1 : 0);
  const float s = div_rn(add_rn(m, -1.0f), add_rn(m, 1.0f));
  const float z = mul_rn(s, s);
  float p = add_rn(mul_rn(z, 1.0f / 9.0f), 1.0f / 7.0f);
  p = add_rn(mul_rn(z, p), 1.0f / 5.0f);
  p = add_rn(mul_rn(z, p), 1.0f / 3.0f);
  p = add_rn(mul_rn(z, p), 1.0f);
  const float ln_m = mul_rn(mul_rn(2.0f, s), p);
  // ln 2 split so that e x hi is exact for |e| < 2^8.
  constexpr float kLn2Hi = 0.693145751953125f;
  constexpr float kLn2Lo = 1.42860677e-06f;
  const auto ef = static_cast<float>(e);
  return add_rn(mul_rn(ef, kLn2Hi), add_rn(mul_rn(ef, kLn2Lo), ln_m));
}

// sin and cos of x in [-pi/4, pi/4] by their Taylor series (next terms < 2e-9).
ZT_PHILOX_FN void sincos_small(float x, float& s, float& c) {
  const float z = mul_rn(x, x);
  float ps = add_rn(mul_rn(z, 1.0f / 362880.0f), -1.0f / 5040.0f);
  ps = add_rn(mul_rn(z, ps), 1.0f / 120.0f);
  ps = add_rn(mul_rn(z, ps), -1.0f / 6.0f);
  s = add_rn(mul_rn(mul_rn(z, ps), x), x);
  float pc = add_rn(mul_rn(z, -1.0f / 3628800.0f), 1.0f / 40320.0f);
  pc = add_rn(mul_rn(z, pc), -1.0f / 720.0f);
  pc = add_rn(mul_rn(z, pc), 1.0f / 24.0f);
  pc = add_rn(mul_rn(z, pc), -0.5f);
  c = add_rn(mul_rn(z, pc), 1.0f);
}

// The two standard normals of one pair of words ([Note: counter-based normals]).
ZT_PHILOX_FN void box_muller(uint32_t a, uint32_t b, float& z0, float& z1) {
  const float u = mul_rn(static_cast<float>(static_cast<int32_t>((a >> 8) + 1u)), 0x1.0p-24f);
  const float r = sqrt_rn(mul_rn(-2.0f, log_positive(u)));
  // t = 2 pi k 2^-24 = (pi/2) (q + f): q the nearest quarter turn, f in [-1/2, 1/2), both exact.
  const auto k = static_cast<int32_t>(b >> 8);
  const int32_t q = (k + (1 << 21)) >> 22;
  const float f = mul_rn(static_cast<float>(k - (q << 22)), 0x1.0p-22f);
  float s, c;
  sincos_small(mul_rn(f, 1.57079637f), s, c);
  // A quarter turn maps (sin, cos) to (cos, -sin); a half turn negates both.
  const bool quarter = (q & 1) != 0, half = (q & 2) != 0;
  const float neg_s = -s, neg_c = -c;
  const float sin_q = quarter ? c : s, cos_q = quarter ? neg_s : c;
  const float neg_sin_q = quarter ? neg_c : neg_s, neg_cos_q = quarter ? s : neg_c;
  const float sin_t = half ? neg_sin_q : sin_q, cos_t = half ? neg_cos_q : cos_q;
  z0 = mul_rn(r, cos_t);
  z1 = mul_rn(r, sin_t);
}

// The four standard normals of block `block` of the stream (seed, stream).
ZT_PHILOX_FN void normal_block(uint64_t seed, uint64_t stream, uint64_t block, float out[4]) {
  const Words w =
      philox4x32_10({{static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32),
                      static_cast<uint32_t>(stream), static_cast<uint32_t>(stream >> 32)}},
                    static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
  box_muller(w.w[0], w.w[1], out[0], out[1]);
  box_muller(w.w[2], w.w[3], out[2], out[3]);
}

}  // namespace zt::kernels::philox
