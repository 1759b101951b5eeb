// Linear layer over kernels::gemm (see linear.h).
#include "zerotrain/nn/linear.h"

#include "zerotrain/core/error.h"
#include "zerotrain/kernels/gemm.h"
#include "zerotrain/kernels/reduce.h"
#include "zerotrain/nn/parameter_util.h"

namespace zt::nn {

void linear_forward(const Tensor& x, const Tensor& w, const Tensor* b, WeightLayout layout,
                    Tensor& y, Stream stream) {
  kernels::GemmOptions opt;
  opt.trans_b = layout == WeightLayout::out_in;
  opt.bias = b;
  kernels::gemm(x, w, y, opt, stream);
}

void linear_backward_input(const Tensor& dy, const Tensor& w, WeightLayout layout, Tensor& dx,
                           bool accumulate, float alpha, Stream stream) {
  kernels::GemmOptions opt;
  opt.trans_b = layout == WeightLayout::in_out;
  opt.alpha = alpha;
  opt.beta = accumulate ? 1.0f : 0.0f;
  kernels::gemm(dy, w, dx, opt, stream);
}

void linear_backward_weight(const Tensor& x, const Tensor& dy, WeightLayout layout, Tensor& dw,
                            float alpha, Stream stream) {
  kernels::GemmOptions opt;
  opt.trans_a = true;
  opt.alpha = alpha;
  opt.beta = 1.0f;
  if (layout == WeightLayout::out_in)
    kernels::gemm(dy, x, dw, opt, stream);
  else
    kernels::gemm(x, dy, dw, opt, stream);
}

Linear::Linear(const std::string& prefix, int64_t in, int64_t out, bool with_bias,
               WeightLayout layout)
    : weight(make_parameter(prefix + ".weight",
                            layout == WeightLayout::out_in ? Shape{out, in} : Shape{in, out},
                            ParamKind::weight)),
      bias(with_bias ? make_parameter(prefix + ".bias", {out}, ParamKind::bias) : Parameter{}),
      in_(in),
      out_(out),
      has_bias_(with_bias),
      layout_(layout) {}

Tensor Linear::forward(const Tensor& x, Stream stream) const {
  if (x.dim() != 2 || x.size(1) != in_)
    throw ShapeError("linear",
                     str(weight.name, ": input ", x.describe(), " must be [N, ", in_, "]"));
  Tensor y = Tensor::empty({x.size(0), out_}, x.dtype(), x.device(), stream);
  linear_forward(x, value_of(weight), has_bias_ ? &value_of(bias) : nullptr, layout_, y, stream);
  return y;
}

void Linear::backward(const Tensor& x, const Tensor& dy, Tensor* dx, bool accumulate_dx,
                      Stream stream) {
  if (dy.dim() != 2 || dy.size(1) != out_ || dy.size(0) != x.size(0))
    throw ShapeError("linear", str(weight.name, ": gradient ", dy.describe(), " must be [",
                                   x.size(0), ", ", out_, "]"));
  if (dx) linear_backward_input(dy, value_of(weight), layout_, *dx, accumulate_dx, 1.0f, stream);
  if (wants_grad(weight)) linear_backward_weight(x, dy, layout_, weight.grad, 1.0f, stream);
  if (has_bias_ && wants_grad(bias)) kernels::sum_rows(dy, bias.grad, /*accumulate=*/true, stream);
}

void Linear::append_parameters(std::vector<Parameter*>& out) {
  out.push_back(&weight);
  if (has_bias_) out.push_back(&bias);
}

}  // namespace zt::nn
