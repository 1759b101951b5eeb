// Front-end of the reductions: validates arguments (typed errors naming the op and the tensors),
// then runs the CPU or CUDA backend. Tested by tests/kernels/test_reduce.cpp and
// tests/kernels/test_reduce_cuda.cpp.
#include "zerotrain/kernels/reduce.h"

#include "zerotrain/kernels/check.h"
#include "zerotrain/kernels/cpu/reduce.h"
#include "zerotrain/kernels/cuda/reduce.h"
#include "zerotrain/kernels/dispatch.h"

namespace zt::kernels {

namespace {

void check_input(std::string_view op, std::string_view name, const Tensor& t) {
  check_defined(op, name, t);
  check_contiguous(op, name, t);
  check_dtype(op, name, t, kFloatTypes);
}

// out: f32 [1], contiguous, on ref's device.
void check_scalar_out(std::string_view op, const Tensor& out, const Tensor& ref,
                      std::string_view ref_name) {
  check_arg(op, "out", out, ref, ref_name);
  check_shape(op, "out", out, {1});
  check_dtype(op, "out", out, {DType::f32});
}

}  // namespace

void sum(const Tensor& x, Tensor& out, Stream stream) {
  check_input("sum", "x", x);
  check_scalar_out("sum", out, x, "x");
  if (x.device().is_cuda())
    ZT_ON_CUDA("sum", cuda::sum(x, out, stream));
  else
    cpu::sum(x, out);
}

void max(const Tensor& x, Tensor& out, Stream stream) {
  check_input("max", "x", x);
  check_scalar_out("max", out, x, "x");
  if (x.numel() == 0) throw ValueError("max", str("x ", x.describe(), " is empty"));
  if (x.device().is_cuda())
    ZT_ON_CUDA("max", cuda::max(x, out, stream));
  else
    cpu::max(x, out);
}

void sum_rows(const Tensor& x, Tensor& out, bool accumulate, Stream stream) {
  check_input("sum_rows", "x", x);
  check_dim("sum_rows", "x", x, 2);
  check_arg("sum_rows", "out", out, x, "x");
  if (out.shape() != Shape{x.size(1)})
    throw ShapeError("sum_rows", str("x ", x.describe(), " and out ", out.describe(),
                                     ": out must have shape [", x.size(1), "]"));
  check_dtype("sum_rows", "out", out, {DType::f32, x.dtype()});
  if (x.device().is_cuda())
    ZT_ON_CUDA("sum_rows", cuda::sum_rows(x, out, accumulate, stream));
  else
    cpu::sum_rows(x, out, accumulate);
}

void global_l2_norm(const std::vector<Tensor>& xs, Tensor& out, Stream stream) {
  check_defined("global_l2_norm", "out", out);
  check_contiguous("global_l2_norm", "out", out);
  check_shape("global_l2_norm", "out", out, {1});
  check_dtype("global_l2_norm", "out", out, {DType::f32});
  // The message names the tensor ("xs[3]"); it is formatted only for a tensor that fails, since
  // a model passes hundreds of tensors on every step.
  for (size_t i = 0; i < xs.size(); ++i) {
    const Tensor& t = xs[i];
    if (t.defined() && t.is_contiguous() && is_floating(t.dtype()) && t.device() == out.device())
      continue;
    const std::string name = str("xs[", i, "]");
    check_input("global_l2_norm", name, t);
    check_same_device("global_l2_norm", name, t, "out", out);
  }
  if (out.device().is_cuda())
    ZT_ON_CUDA("global_l2_norm", cuda::global_l2_norm(xs, out, stream));
  else
    cpu::global_l2_norm(xs, out);
}

void chunk_sum_squares(const Tensor& x, int64_t chunk, Tensor& out, Stream stream) {
  check_input("chunk_sum_squares", "x", x);
  if (chunk < 1) throw ValueError("chunk_sum_squares", str("chunk = ", chunk, ": must be >= 1"));
  check_arg("chunk_sum_squares", "out", out, x, "x");
  check_shape("chunk_sum_squares", "out", out, {(x.numel() + chunk - 1) / chunk});
  check_dtype("chunk_sum_squares", "out", out, {DType::f32});
  if (x.numel() == 0) return;
  if (x.device().is_cuda())
    ZT_ON_CUDA("chunk_sum_squares", cuda::chunk_sum_squares(x, chunk, out, stream));
  else
    cpu::chunk_sum_squares(x, chunk, out);
}

}  // namespace zt::kernels
