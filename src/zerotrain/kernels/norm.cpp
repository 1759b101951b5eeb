// Front-end of RMSNorm and LayerNorm: validates every argument (typed errors naming the op and the
// tensors), then runs the CPU or CUDA kernel. Tested by tests/kernels/test_norm.cpp (CPU) and
// tests/kernels/test_norm_cuda.cpp.
#include "zerotrain/kernels/norm.h"

#include <cmath>
#include <cstdint>
#include <limits>

#include "zerotrain/kernels/check.h"
#include "zerotrain/kernels/cpu/norm.h"
#include "zerotrain/kernels/cuda/norm.h"
#include "zerotrain/kernels/dispatch.h"

namespace zt::kernels {

namespace {

// x: [N, C], C >= 1, a floating dtype.
void check_input(std::string_view op, const Tensor& x) {
  check_defined(op, "x", x);
  check_contiguous(op, "x", x);
  check_dim(op, "x", x, 2);
  check_dtype(op, "x", x, kFloatTypes);
  if (x.size(1) < 1 || x.size(1) > std::numeric_limits<int32_t>::max())
    throw ShapeError(op, str("x ", x.describe(), " must have between 1 and 2^31 - 1 columns"));
}

// A tensor of x's shape and dtype (y, dy, dx).
void check_like_x(std::string_view op, std::string_view name, const Tensor& t, const Tensor& x) {
  check_arg(op, name, t, x, "x");
  check_same_shape(op, "x", x, name, t);
  check_same_dtype(op, "x", x, name, t);
}

// A per-column parameter (weight, bias): [C], any floating dtype.
void check_param(std::string_view op, std::string_view name, const Tensor& t, const Tensor& x) {
  check_arg(op, name, t, x, "x");
  check_dtype(op, name, t, kFloatTypes);
  if (t.dim() != 1 || t.size(0) != x.size(1))
    throw ShapeError(
        op, str(name, " ", t.describe(), " does not match the last dimension of x ", x.describe()));
}

// A per-row statistic (mean, rstd): f32 [N].
void check_stat(std::string_view op, std::string_view name, const Tensor& t, const Tensor& x) {
  check_arg(op, name, t, x, "x");
  check_dtype(op, name, t, {DType::f32});
  if (t.dim() != 1 || t.size(0) != x.size(0))
    throw ShapeError(
        op, str(name, " ", t.describe(), " must hold one value per row of x ", x.describe()));
}

// A parameter gradient: the parameter's shape, f32 or the parameter's dtype.
void check_param_grad(std::string_view op, std::string_view name, const Tensor& g,
                      std::string_view param_name, const Tensor& param) {
  check_arg(op, name, g, param, param_name);
  check_same_shape(op, param_name, param, name, g);
  if (g.dtype() != DType::f32 && g.dtype() != param.dtype())
    throw DTypeError(op, str(name, " ", g.describe(), ": dtype must be f32 or that of ", param_name,
                             " ", param.describe()));
}

void check_eps(std::string_view op, float eps) {
  if (!(eps >= 0.0f) || !std::isfinite(eps))
    throw ValueError(op, str("eps must be finite and >= 0, got ", eps));
}

}  // namespace

void rmsnorm_forward(const Tensor& x, const Tensor& w, Tensor& y, Tensor& rstd, float eps,
                     Stream stream) {
  constexpr std::string_view op = "rmsnorm_forward";
  check_input(op, x);
  check_param(op, "w", w, x);
  check_like_x(op, "y", y, x);
  check_stat(op, "rstd", rstd, x);
  check_eps(op, eps);
  if (x.device().is_cuda())
    ZT_ON_CUDA(op, cuda::rmsnorm_forward(x, w, y, rstd, eps, stream));
  else
    cpu::rmsnorm_forward(x, w, y, rstd, eps);
}

void rmsnorm_backward(const Tensor& x, const Tensor& w, const Tensor& rstd, const Tensor& dy,
                      Tensor& dx, Tensor& dw, bool accumulate, Stream stream) {
  constexpr std::string_view op = "rmsnorm_backward";
  check_input(op, x);
  check_param(op, "w", w, x);
  check_stat(op, "rstd", rstd, x);
  check_like_x(op, "dy", dy, x);
  check_like_x(op, "dx", dx, x);
  check_param_grad(op, "dw", dw, "w", w);
  if (x.device().is_cuda())
    ZT_ON_CUDA(op, cuda::rmsnorm_backward(x, w, rstd, dy, dx, dw, accumulate, stream));
  else
    cpu::rmsnorm_backward(x, w, rstd, dy, dx, dw, accumulate);
}

void layernorm_forward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y, Tensor& mean,
                       Tensor& rstd, float eps, Stream stream) {
  constexpr std::string_view op = "layernorm_forward";
  check_input(op, x);
  check_param(op, "w", w, x);
  if (b.defined()) {
    check_param(op, "b", b, x);
    check_same_dtype(op, "w", w, "b", b);
  }
  check_like_x(op, "y", y, x);
  check_stat(op, "mean", mean, x);
  check_stat(op, "rstd", rstd, x);
  check_eps(op, eps);
  if (x.device().is_cuda())
    ZT_ON_CUDA(op, cuda::layernorm_forward(x, w, b, y, mean, rstd, eps, stream));
  else
    cpu::layernorm_forward(x, w, b, y, mean, rstd, eps);
}

void layernorm_backward(const Tensor& x, const Tensor& w, const Tensor& mean, const Tensor& rstd,
                        const Tensor& dy, Tensor& dx, Tensor& dw, Tensor& db, bool accumulate,
                        Stream stream) {
  constexpr std::string_view op = "layernorm_backward";
  check_input(op, x);
  check_param(op, "w", w, x);
  check_stat(op, "mean", mean, x);
  check_stat(op, "rstd", rstd, x);
  check_like_x(op, "dy", dy, x);
  check_like_x(op, "dx", dx, x);
  check_param_grad(op, "dw", dw, "w", w);
  if (db.defined()) check_param_grad(op, "db", db, "w", w);
  if (x.device().is_cuda())
    ZT_ON_CUDA(op, cuda::layernorm_backward(x, w, mean, rstd, dy, dx, dw, db, accumulate, stream));
  else
    cpu::layernorm_backward(x, w, mean, rstd, dy, dx, dw, db, accumulate);
}

}  // namespace zt::kernels
