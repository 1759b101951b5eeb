// Host <-> tensor copies with dtype conversion (see tensor_copy.h).
#include "zerotrain/io/tensor_copy.h"

#include <cstdint>
#include <cstring>

#include "zerotrain/kernels/cast.h"

namespace zt::io {

namespace {
void check_convertible(DType from, DType to, std::string_view component, const std::string& what) {
  if (from == to || (is_floating(from) && is_floating(to))) return;
  throw DTypeError(component,
                   str(what, ": cannot convert ", dtype_name(from), " to ", dtype_name(to),
                       " (only floating dtypes convert into one another)"));
}
}  // namespace

void copy_host_elements(const std::byte* src, DType src_dtype, const Tensor& dst,
                        std::string_view component, const std::string& what, Stream stream) {
  if (!dst.defined())
    throw ValueError(component, str(what, ": the destination tensor is undefined"));
  if (!dst.is_contiguous())
    throw ShapeError(component,
                     str(what, ": the destination ", dst.describe(), " is not contiguous"));
  check_convertible(src_dtype, dst.dtype(), component, what);
  const int64_t n = dst.numel();
  if (n == 0) return;
  const Device dev = dst.device();
  if (src_dtype == dst.dtype()) {
    copy_bytes(dst.data(), dev, src, Device::cpu(), dst.nbytes(), stream);
    if (dev.is_cuda()) synchronize(stream);
    return;
  }
  const size_t src_bytes = static_cast<size_t>(n) * dtype_size(src_dtype);
  Tensor out = dst.view({n});
  if (dev.is_cpu()) {
    // Typed host loads need aligned addresses; files from other writers may not align tensors.
    Tensor host;
    if (reinterpret_cast<uintptr_t>(src) % dtype_size(src_dtype) == 0) {
      host = Tensor::wrap(const_cast<std::byte*>(src), {n}, src_dtype, Device::cpu());
    } else {
      host = Tensor::empty({n}, src_dtype);
      std::memcpy(host.data(), src, src_bytes);
    }
    kernels::cast(host, out, stream);
    return;
  }
  Tensor staged = Tensor::empty({n}, src_dtype, dev, stream);
  copy_bytes(staged.data(), dev, src, Device::cpu(), src_bytes, stream);
  kernels::cast(staged, out, stream);
  synchronize(stream);
}

Tensor host_copy_as(const Tensor& t, DType dtype, std::string_view component,
                    const std::string& what, Stream stream) {
  if (!t.defined()) throw ValueError(component, str(what, ": the tensor is undefined"));
  check_convertible(t.dtype(), dtype, component, what);
  Tensor c = kernels::cast_to(t.contiguous(stream), dtype, stream);
  if (c.device().is_cpu()) return c;
  Tensor h = c.to(Device::cpu(), stream);
  synchronize(stream);
  return h;
}

}  // namespace zt::io
