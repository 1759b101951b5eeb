// Front-end of the elementwise family: validates arguments (typed errors naming the op and the
// tensors), then runs the CPU or CUDA backend. Tested by tests/kernels/test_elementwise.cpp and
// tests/kernels/test_elementwise_cuda.cpp.
#include "zerotrain/kernels/elementwise.h"

#include "zerotrain/kernels/check.h"
#include "zerotrain/kernels/cpu/elementwise.h"
#include "zerotrain/kernels/cuda/elementwise.h"
#include "zerotrain/kernels/dispatch.h"

namespace zt::kernels {

namespace {

// The tensor every other argument is checked against: defined, contiguous, floating dtype.
void check_first(std::string_view op, std::string_view name, const Tensor& t) {
  check_defined(op, name, t);
  check_contiguous(op, name, t);
  check_dtype(op, name, t, kFloatTypes);
}

// Defined, contiguous, and on the device, of the shape and of the dtype of `ref`.
void check_like(std::string_view op, std::string_view name, const Tensor& t,
                std::string_view ref_name, const Tensor& ref) {
  check_arg(op, name, t, ref, ref_name);
  check_same_shape(op, ref_name, ref, name, t);
  check_same_dtype(op, ref_name, ref, name, t);
}

}  // namespace

void add(const Tensor& a, const Tensor& b, Tensor& out, float alpha, Stream stream) {
  check_first("add", "a", a);
  check_like("add", "b", b, "a", a);
  check_like("add", "out", out, "a", a);
  if (a.device().is_cuda())
    ZT_ON_CUDA("add", cuda::add(a, b, out, alpha, stream));
  else
    cpu::add(a, b, out, alpha);
}

void mul(const Tensor& a, const Tensor& b, Tensor& out, Stream stream) {
  check_first("mul", "a", a);
  check_like("mul", "b", b, "a", a);
  check_like("mul", "out", out, "a", a);
  if (a.device().is_cuda())
    ZT_ON_CUDA("mul", cuda::mul(a, b, out, stream));
  else
    cpu::mul(a, b, out);
}

void scale(const Tensor& x, float alpha, Tensor& out, Stream stream) {
  check_first("scale", "x", x);
  check_like("scale", "out", out, "x", x);
  if (x.device().is_cuda())
    ZT_ON_CUDA("scale", cuda::scale(x, alpha, out, stream));
  else
    cpu::scale(x, alpha, out);
}

void gelu_tanh_forward(const Tensor& x, Tensor& y, Stream stream) {
  check_first("gelu_tanh_forward", "x", x);
  check_like("gelu_tanh_forward", "y", y, "x", x);
  if (x.device().is_cuda())
    ZT_ON_CUDA("gelu_tanh_forward", cuda::gelu_tanh_forward(x, y, stream));
  else
    cpu::gelu_tanh_forward(x, y);
}

void gelu_tanh_backward(const Tensor& x, const Tensor& dy, Tensor& dx, Stream stream) {
  check_first("gelu_tanh_backward", "x", x);
  check_like("gelu_tanh_backward", "dy", dy, "x", x);
  check_like("gelu_tanh_backward", "dx", dx, "x", x);
  if (x.device().is_cuda())
    ZT_ON_CUDA("gelu_tanh_backward", cuda::gelu_tanh_backward(x, dy, dx, stream));
  else
    cpu::gelu_tanh_backward(x, dy, dx);
}

void silu_forward(const Tensor& x, Tensor& y, Stream stream) {
  check_first("silu_forward", "x", x);
  check_like("silu_forward", "y", y, "x", x);
  if (x.device().is_cuda())
    ZT_ON_CUDA("silu_forward", cuda::silu_forward(x, y, stream));
  else
    cpu::silu_forward(x, y);
}

void silu_backward(const Tensor& x, const Tensor& dy, Tensor& dx, Stream stream) {
  check_first("silu_backward", "x", x);
  check_like("silu_backward", "dy", dy, "x", x);
  check_like("silu_backward", "dx", dx, "x", x);
  if (x.device().is_cuda())
    ZT_ON_CUDA("silu_backward", cuda::silu_backward(x, dy, dx, stream));
  else
    cpu::silu_backward(x, dy, dx);
}

void swiglu_forward(const Tensor& gate, const Tensor& up, Tensor& out, Stream stream) {
  check_first("swiglu_forward", "gate", gate);
  check_like("swiglu_forward", "up", up, "gate", gate);
  check_like("swiglu_forward", "out", out, "gate", gate);
  if (gate.device().is_cuda())
    ZT_ON_CUDA("swiglu_forward", cuda::swiglu_forward(gate, up, out, stream));
  else
    cpu::swiglu_forward(gate, up, out);
}

void swiglu_backward(const Tensor& gate, const Tensor& up, const Tensor& dout, Tensor& dgate,
                     Tensor& dup, Stream stream) {
  check_first("swiglu_backward", "gate", gate);
  check_like("swiglu_backward", "up", up, "gate", gate);
  check_like("swiglu_backward", "dout", dout, "gate", gate);
  check_like("swiglu_backward", "dgate", dgate, "gate", gate);
  check_like("swiglu_backward", "dup", dup, "gate", gate);
  if (gate.device().is_cuda())
    ZT_ON_CUDA("swiglu_backward", cuda::swiglu_backward(gate, up, dout, dgate, dup, stream));
  else
    cpu::swiglu_backward(gate, up, dout, dgate, dup);
}

}  // namespace zt::kernels
