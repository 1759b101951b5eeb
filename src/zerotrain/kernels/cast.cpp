// Front-end of the cast family: argument checks, then the CPU or CUDA kernel.
// Tested by tests/kernels/test_cast.cpp (CPU) and test_cast_cuda.cpp.
#include "zerotrain/kernels/cast.h"

#include "zerotrain/kernels/check.h"
#include "zerotrain/kernels/cpu/cast.h"
#include "zerotrain/kernels/cuda/cast.h"
#include "zerotrain/kernels/dispatch.h"

namespace zt::kernels {

namespace {
bool bytes_overlap(const Tensor& a, const Tensor& b) {
  const auto* pa = static_cast<const char*>(a.data());
  const auto* pb = static_cast<const char*>(b.data());
  return pa < pb + b.nbytes() && pb < pa + a.nbytes();
}
}  // namespace

void cast(const Tensor& src, Tensor& dst, Stream stream) {
  constexpr const char* op = "cast";
  check_arg(op, "src", src, src, "src");
  check_arg(op, "dst", dst, src, "src");
  check_dtype(op, "src", src, kFloatTypes);
  check_dtype(op, "dst", dst, kFloatTypes);
  if (src.numel() != dst.numel())
    throw ShapeError(op, str("src ", src.describe(), " and dst ", dst.describe(),
                             ": element counts differ (", src.numel(), " vs ", dst.numel(), ")"));
  if (src.numel() == 0) return;
  if (bytes_overlap(src, dst) && !(src.data() == dst.data() && src.dtype() == dst.dtype()))
    throw ValueError(
        op, str("src ", src.describe(), " and dst ", dst.describe(), " overlap in memory"));
  if (src.device().is_cuda())
    ZT_ON_CUDA(op, cuda::cast(src, dst, stream));
  else
    cpu::cast(src, dst);
}

Tensor cast_to(const Tensor& src, DType dtype, Stream stream) {
  check_defined("cast", "src", src);
  if (src.dtype() == dtype) return src;
  Tensor dst = Tensor::empty(src.shape(), dtype, src.device(), stream);
  cast(src, dst, stream);
  return dst;
}

}  // namespace zt::kernels
