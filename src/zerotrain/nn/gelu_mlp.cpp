// GELU-tanh MLP (see gelu_mlp.h).
#include "zerotrain/nn/gelu_mlp.h"

#include "zerotrain/core/error.h"
#include "zerotrain/kernels/elementwise.h"

namespace zt::nn {

GeluMlp::GeluMlp(const std::string& prefix, const ModelConfig& c)
    : c_fc(prefix + ".c_fc", c.hidden_size, c.intermediate_size, true, WeightLayout::in_out),
      c_proj(prefix + ".c_proj", c.intermediate_size, c.hidden_size, true, WeightLayout::in_out) {}

Tensor GeluMlp::forward(const Tensor& x, TokenDims, Stream stream) {
  Tensor pre = c_fc.forward(x, stream);
  Tensor act = Tensor::empty(pre.shape(), pre.dtype(), pre.device(), stream);
  kernels::gelu_tanh_forward(pre, act, stream);
  x_ = x;
  pre_ = pre;
  return c_proj.forward(act, stream);
}

void GeluMlp::recompute(const Tensor& x, TokenDims, Stream stream) {
  x_ = x;
  pre_ = c_fc.forward(x, stream);
}

Tensor GeluMlp::backward(const Tensor& dy, Stream stream) {
  if (!x_.defined())
    throw ValueError("mlp", str(c_fc.weight.name, ": backward without a saved forward"));
  const Device dev = x_.device();
  const DType dt = x_.dtype();
  Tensor dact = Tensor::empty(pre_.shape(), dt, dev, stream);
  {
    Tensor act = Tensor::empty(pre_.shape(), dt, dev, stream);
    kernels::gelu_tanh_forward(pre_, act, stream);
    c_proj.backward(act, dy, &dact, false, stream);
  }
  kernels::gelu_tanh_backward(pre_, dact, dact, stream);  // in place: dact becomes d(pre)
  Tensor dx = Tensor::empty(x_.shape(), dt, dev, stream);
  c_fc.backward(x_, dact, &dx, false, stream);
  release();
  return dx;
}

void GeluMlp::release() {
  x_ = pre_ = {};
}

void GeluMlp::append_parameters(std::vector<Parameter*>& out) {
  c_fc.append_parameters(out);
  c_proj.append_parameters(out);
}

}  // namespace zt::nn
