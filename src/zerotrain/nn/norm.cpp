// RMSNorm / LayerNorm layer over kernels/norm.h (see norm.h).
#include "zerotrain/nn/norm.h"

#include "zerotrain/core/error.h"
#include "zerotrain/kernels/norm.h"
#include "zerotrain/nn/parameter_util.h"

namespace zt::nn {

Norm::Norm(const std::string& prefix, int64_t width, NormKind kind, double eps)
    : weight(make_parameter(prefix + ".weight", {width}, ParamKind::norm)),
      bias(kind == NormKind::layer ? make_parameter(prefix + ".bias", {width}, ParamKind::bias)
                                   : Parameter{}),
      kind_(kind),
      eps_(static_cast<float>(eps)) {}

Tensor Norm::run(const Tensor& x, Tensor& mean, Tensor& rstd, Stream stream) const {
  if (x.dim() != 2 || x.size(1) != weight.shape[0])
    throw ShapeError(
        "norm", str(weight.name, ": input ", x.describe(), " must be [N, ", weight.shape[0], "]"));
  const int64_t n = x.size(0);
  Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device(), stream);
  rstd = Tensor::empty({n}, DType::f32, x.device(), stream);
  if (kind_ == NormKind::rms) {
    kernels::rmsnorm_forward(x, value_of(weight), y, rstd, eps_, stream);
  } else {
    mean = Tensor::empty({n}, DType::f32, x.device(), stream);
    kernels::layernorm_forward(x, value_of(weight), value_of(bias), y, mean, rstd, eps_, stream);
  }
  return y;
}

Tensor Norm::forward(const Tensor& x, Stream stream) {
  Tensor y = run(x, mean_, rstd_, stream);
  x_ = x;
  return y;
}

Tensor Norm::apply(const Tensor& x, Stream stream) const {
  Tensor mean, rstd;
  return run(x, mean, rstd, stream);
}

Tensor Norm::backward(const Tensor& dy, Stream stream) {
  if (!x_.defined())
    throw ValueError("norm", str(weight.name, ": backward without a saved forward"));
  Tensor dx = Tensor::empty(x_.shape(), x_.dtype(), x_.device(), stream);
  // A frozen parameter's gradient goes to a scratch buffer (the kernels always write one).
  auto grad_or_scratch = [&](Parameter& p) {
    return wants_grad(p) ? p.grad : Tensor::empty(p.shape, DType::f32, x_.device(), stream);
  };
  Tensor dw = grad_or_scratch(weight);
  if (kind_ == NormKind::rms) {
    kernels::rmsnorm_backward(x_, value_of(weight), rstd_, dy, dx, dw, /*accumulate=*/true, stream);
  } else {
    Tensor db = grad_or_scratch(bias);
    kernels::layernorm_backward(x_, value_of(weight), mean_, rstd_, dy, dx, dw, db,
                                /*accumulate=*/true, stream);
  }
  return dx;
}

void Norm::release() {
  x_ = {};
  mean_ = {};
  rstd_ = {};
}

void Norm::append_parameters(std::vector<Parameter*>& out) {
  out.push_back(&weight);
  if (kind_ == NormKind::layer) out.push_back(&bias);
}

}  // namespace zt::nn
