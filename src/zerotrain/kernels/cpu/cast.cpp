// CPU cast: one OpenMP loop per (source, destination) dtype pair, element conversions from
// core/half.h (round to nearest even, subnormals kept, NaN stays NaN). Elementwise, so the result
// does not depend on the thread count. Tested by tests/kernels/test_cast.cpp.
#include "zerotrain/kernels/cpu/cast.h"

#include <cstdint>
#include <cstring>

namespace zt::kernels::cpu {

namespace {

// Element storage: float as is, 16-bit types as their raw bits.
template <DType D>
struct Elem;
template <>
struct Elem<DType::f32> {
  using type = float;
  static float load(float x) { return x; }
  static float store(float x) { return x; }
};
template <>
struct Elem<DType::f16> {
  using type = uint16_t;
  static float load(uint16_t x) { return f16::to_float(x); }
  static uint16_t store(float x) { return f16::from_float(x); }
};
template <>
struct Elem<DType::bf16> {
  using type = uint16_t;
  static float load(uint16_t x) { return bf16::to_float(x); }
  static uint16_t store(float x) { return bf16::from_float(x); }
};

template <DType S, DType D>
void convert(const void* src, void* dst, int64_t n) {
  const auto* s = static_cast<const typename Elem<S>::type*>(src);
  auto* d = static_cast<typename Elem<D>::type*>(dst);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i)
    d[i] = Elem<D>::store(Elem<S>::load(s[i]));
}

template <DType S>
void convert_from(const void* src, void* dst, DType to, int64_t n) {
  switch (to) {
    case DType::f32:
      convert<S, DType::f32>(src, dst, n);
      break;
    case DType::f16:
      convert<S, DType::f16>(src, dst, n);
      break;
    case DType::bf16:
      convert<S, DType::bf16>(src, dst, n);
      break;
    default:
      throw DTypeError("cast", str("unsupported destination dtype ", dtype_name(to)));
  }
}

}  // namespace

void cast(const Tensor& src, Tensor& dst) {
  const int64_t n = src.numel();
  if (src.dtype() == dst.dtype()) {
    if (src.data() != dst.data()) std::memcpy(dst.data(), src.data(), src.nbytes());
    return;
  }
  switch (src.dtype()) {
    case DType::f32:
      convert_from<DType::f32>(src.data(), dst.data(), dst.dtype(), n);
      break;
    case DType::f16:
      convert_from<DType::f16>(src.data(), dst.data(), dst.dtype(), n);
      break;
    case DType::bf16:
      convert_from<DType::bf16>(src.data(), dst.data(), dst.dtype(), n);
      break;
    default:
      throw DTypeError("cast", str("unsupported source dtype ", dtype_name(src.dtype())));
  }
}

}  // namespace zt::kernels::cpu
