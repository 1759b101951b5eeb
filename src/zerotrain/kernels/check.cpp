#include "zerotrain/kernels/check.h"

namespace zt::kernels {

void check_defined(std::string_view op, std::string_view name, const Tensor& t) {
  if (!t.defined()) throw ValueError(op, str(name, " is an undefined tensor"));
}

void check_contiguous(std::string_view op, std::string_view name, const Tensor& t) {
  if (!t.is_contiguous())
    throw ShapeError(op, str(name, " ", t.describe(), " must be contiguous (strides ",
                             to_string(t.strides()), ")"));
}

void check_dim(std::string_view op, std::string_view name, const Tensor& t, int64_t ndim) {
  if (t.dim() != ndim)
    throw ShapeError(op, str(name, " ", t.describe(), ": expected ", ndim, " dimensions"));
}

void check_shape(std::string_view op, std::string_view name, const Tensor& t,
                 const Shape& expected) {
  if (t.shape() != expected)
    throw ShapeError(op, str(name, " ", t.describe(), ": expected shape ", to_string(expected)));
}

void check_dtype(std::string_view op, std::string_view name, const Tensor& t,
                 std::initializer_list<DType> allowed) {
  for (DType d : allowed)
    if (t.dtype() == d) return;
  std::string list;
  for (DType d : allowed)
    list += (list.empty() ? "" : ", ") + std::string(dtype_name(d));
  throw DTypeError(op, str(name, " ", t.describe(), ": dtype must be one of ", list));
}

void check_same_shape(std::string_view op, std::string_view a_name, const Tensor& a,
                      std::string_view b_name, const Tensor& b) {
  if (a.shape() != b.shape())
    throw ShapeError(
        op, str(a_name, " ", a.describe(), " and ", b_name, " ", b.describe(), ": shapes differ"));
}

void check_same_dtype(std::string_view op, std::string_view a_name, const Tensor& a,
                      std::string_view b_name, const Tensor& b) {
  if (a.dtype() != b.dtype())
    throw DTypeError(
        op, str(a_name, " ", a.describe(), " and ", b_name, " ", b.describe(), ": dtypes differ"));
}

void check_same_device(std::string_view op, std::string_view a_name, const Tensor& a,
                       std::string_view b_name, const Tensor& b) {
  if (a.device() != b.device())
    throw DeviceError(
        op, str(a_name, " ", a.describe(), " and ", b_name, " ", b.describe(), ": devices differ"));
}

void check_arg(std::string_view op, std::string_view name, const Tensor& t, const Tensor& ref,
               std::string_view ref_name) {
  check_defined(op, name, t);
  check_contiguous(op, name, t);
  if (&t != &ref) check_same_device(op, name, t, ref_name, ref);
}

}  // namespace zt::kernels
