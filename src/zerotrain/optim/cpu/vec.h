// The vector types the CPU optimizer kernels are written over: VScalar (one float), V256 (AVX2,
// 8 floats) and V512 (AVX-512, 16 floats), each with loads from and stores to f32/bf16/f16 memory
// (bf16 and f16 rounded to nearest even, NaN kept quiet, exactly as core/half.h rounds) and the
// few arithmetic operations the updates need. Only the kernels_<isa>.cpp files include this, and
// everything here has internal linkage: see [Note: ISA translation units] in kernels_impl.h.
// Tested by tests/optim/test_cpu_isa.cpp (bitwise against VScalar).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "zerotrain/core/half.h"

#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace zt::optim::cpu {
namespace {

inline float bf16_bits_to_float(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline uint16_t float_to_bf16_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

struct VScalar {
  static constexpr int kWidth = 1;
  float v;

  static VScalar set1(float x) { return {x}; }
  static VScalar load(const float* p) { return {*p}; }
  static VScalar load(const bf16* p) { return {bf16_bits_to_float(p->bits)}; }
  static VScalar load(const f16* p) { return {f16::to_float(p->bits)}; }
  void store(float* p) const { *p = v; }
  void store(bf16* p) const { p->bits = float_to_bf16_bits(v); }
  void store(f16* p) const { p->bits = f16::from_float(v); }
  float sum() const { return v; }

  friend VScalar operator+(VScalar a, VScalar b) { return {a.v + b.v}; }
  friend VScalar operator-(VScalar a, VScalar b) { return {a.v - b.v}; }
  friend VScalar operator*(VScalar a, VScalar b) { return {a.v * b.v}; }
  friend VScalar operator/(VScalar a, VScalar b) { return {a.v / b.v}; }
  friend VScalar sqrt(VScalar a) { return {std::sqrt(a.v)}; }
  // a > b ? a : b, as maxps: b when either is NaN.
  friend VScalar max(VScalar a, VScalar b) { return {a.v > b.v ? a.v : b.v}; }
  // torch.sign: -1, 0 or 1.
  friend VScalar sign(VScalar a) { return {a.v > 0.0f ? 1.0f : (a.v < 0.0f ? -1.0f : 0.0f)}; }
};

#if defined(__AVX2__)
struct V256 {
  static constexpr int kWidth = 8;
  __m256 v;

  static V256 set1(float x) { return {_mm256_set1_ps(x)}; }
  static V256 load(const float* p) { return {_mm256_loadu_ps(p)}; }
  static V256 load(const bf16* p) {
    const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return {_mm256_castsi256_ps(_mm256_slli_epi32(w, 16))};
  }
  static V256 load(const f16* p) {
    return {_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)))};
  }
  void store(float* p) const { _mm256_storeu_ps(p, v); }
  void store(bf16* p) const {
    const __m256i u = _mm256_castps_si256(v);
    const __m256i hi = _mm256_srli_epi32(u, 16);
    const __m256i bias =
        _mm256_add_epi32(_mm256_set1_epi32(0x7fff), _mm256_and_si256(hi, _mm256_set1_epi32(1)));
    const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(u, bias), 16);
    const __m256i quiet = _mm256_or_si256(hi, _mm256_set1_epi32(0x40));
    const __m256 nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
    const __m256i r = _mm256_castps_si256(
        _mm256_blendv_ps(_mm256_castsi256_ps(rounded), _mm256_castsi256_ps(quiet), nan));
    const __m128i packed =
        _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), packed);
  }
  void store(f16* p) const {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
  }
  float sum() const {
    const __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    const __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
    return _mm_cvtss_f32(_mm_add_ss(s2, _mm_movehdup_ps(s2)));
  }

  friend V256 operator+(V256 a, V256 b) { return {_mm256_add_ps(a.v, b.v)}; }
  friend V256 operator-(V256 a, V256 b) { return {_mm256_sub_ps(a.v, b.v)}; }
  friend V256 operator*(V256 a, V256 b) { return {_mm256_mul_ps(a.v, b.v)}; }
  friend V256 operator/(V256 a, V256 b) { return {_mm256_div_ps(a.v, b.v)}; }
  friend V256 sqrt(V256 a) { return {_mm256_sqrt_ps(a.v)}; }
  friend V256 max(V256 a, V256 b) { return {_mm256_max_ps(a.v, b.v)}; }
  friend V256 sign(V256 a) {
    const __m256 zero = _mm256_setzero_ps();
    const __m256 pos = _mm256_and_ps(_mm256_cmp_ps(a.v, zero, _CMP_GT_OQ), _mm256_set1_ps(1.0f));
    const __m256 neg = _mm256_and_ps(_mm256_cmp_ps(a.v, zero, _CMP_LT_OQ), _mm256_set1_ps(-1.0f));
    return {_mm256_or_ps(pos, neg)};
  }
};
#endif

#if defined(__AVX512F__)
struct V512 {
  static constexpr int kWidth = 16;
  __m512 v;

  static V512 set1(float x) { return {_mm512_set1_ps(x)}; }
  static V512 load(const float* p) { return {_mm512_loadu_ps(p)}; }
  static V512 load(const bf16* p) {
    const __m512i w =
        _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    return {_mm512_castsi512_ps(_mm512_slli_epi32(w, 16))};
  }
  static V512 load(const f16* p) {
    return {_mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)))};
  }
  void store(float* p) const { _mm512_storeu_ps(p, v); }
  void store(bf16* p) const {
    const __m512i u = _mm512_castps_si512(v);
    const __m512i hi = _mm512_srli_epi32(u, 16);
    const __m512i bias =
        _mm512_add_epi32(_mm512_set1_epi32(0x7fff), _mm512_and_si512(hi, _mm512_set1_epi32(1)));
    __m512i r = _mm512_srli_epi32(_mm512_add_epi32(u, bias), 16);
    const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    r = _mm512_mask_mov_epi32(r, nan, _mm512_or_si512(hi, _mm512_set1_epi32(0x40)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtepi32_epi16(r));
  }
  void store(f16* p) const {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p),
                        _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  float sum() const { return _mm512_reduce_add_ps(v); }

  friend V512 operator+(V512 a, V512 b) { return {_mm512_add_ps(a.v, b.v)}; }
  friend V512 operator-(V512 a, V512 b) { return {_mm512_sub_ps(a.v, b.v)}; }
  friend V512 operator*(V512 a, V512 b) { return {_mm512_mul_ps(a.v, b.v)}; }
  friend V512 operator/(V512 a, V512 b) { return {_mm512_div_ps(a.v, b.v)}; }
  friend V512 sqrt(V512 a) { return {_mm512_sqrt_ps(a.v)}; }
  friend V512 max(V512 a, V512 b) { return {_mm512_max_ps(a.v, b.v)}; }
  friend V512 sign(V512 a) {
    const __m512 zero = _mm512_setzero_ps();
    const __mmask16 pos = _mm512_cmp_ps_mask(a.v, zero, _CMP_GT_OQ);
    const __mmask16 neg = _mm512_cmp_ps_mask(a.v, zero, _CMP_LT_OQ);
    const __m512 r = _mm512_maskz_mov_ps(pos, _mm512_set1_ps(1.0f));
    return {_mm512_mask_mov_ps(r, neg, _mm512_set1_ps(-1.0f))};
  }
};
#endif

}  // namespace
}  // namespace zt::optim::cpu
