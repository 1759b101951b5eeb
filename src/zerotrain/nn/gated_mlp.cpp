// SwiGLU MLP (see gated_mlp.h).
#include "zerotrain/nn/gated_mlp.h"

#include "zerotrain/core/error.h"
#include "zerotrain/kernels/elementwise.h"

namespace zt::nn {

GatedMlp::GatedMlp(const std::string& prefix, const ModelConfig& c, const Architecture& arch)
    : gate_proj(prefix + ".gate_proj", c.hidden_size, c.intermediate_size, arch.mlp_bias),
      up_proj(prefix + ".up_proj", c.hidden_size, c.intermediate_size, arch.mlp_bias),
      down_proj(prefix + ".down_proj", c.intermediate_size, c.hidden_size, arch.mlp_bias) {}

Tensor GatedMlp::swiglu_saving_inputs(const Tensor& x, Stream stream) {
  x_ = x;
  gate_ = gate_proj.forward(x, stream);
  up_ = up_proj.forward(x, stream);
  Tensor h = Tensor::empty(gate_.shape(), gate_.dtype(), gate_.device(), stream);
  kernels::swiglu_forward(gate_, up_, h, stream);
  return h;
}

Tensor GatedMlp::forward(const Tensor& x, TokenDims, Stream stream) {
  h_ = {};  // only recompute keeps the product
  return down_proj.forward(swiglu_saving_inputs(x, stream), stream);
}

void GatedMlp::recompute(const Tensor& x, TokenDims, Stream stream) {
  h_ = swiglu_saving_inputs(x, stream);
}

Tensor GatedMlp::backward(const Tensor& dy, Stream stream) {
  if (!x_.defined())
    throw ValueError("mlp", str(gate_proj.weight.name, ": backward without a saved forward"));
  const Device dev = x_.device();
  const DType dt = x_.dtype();
  Tensor dh = Tensor::empty(gate_.shape(), dt, dev, stream);
  {
    Tensor h = h_;
    h_ = {};  // freed before dgate and dup exist: the backward's peak stays that of recomputing
    if (!h.defined()) {
      h = Tensor::empty(gate_.shape(), dt, dev, stream);
      kernels::swiglu_forward(gate_, up_, h, stream);
    }
    down_proj.backward(h, dy, &dh, false, stream);
  }
  Tensor dgate = Tensor::empty(gate_.shape(), dt, dev, stream);
  Tensor dup = Tensor::empty(up_.shape(), dt, dev, stream);
  kernels::swiglu_backward(gate_, up_, dh, dgate, dup, stream);
  dh = {};
  Tensor dx = Tensor::empty(x_.shape(), dt, dev, stream);
  gate_proj.backward(x_, dgate, &dx, false, stream);
  up_proj.backward(x_, dup, &dx, true, stream);
  release();
  return dx;
}

void GatedMlp::release() {
  x_ = gate_ = up_ = h_ = {};
}

void GatedMlp::append_parameters(std::vector<Parameter*>& out) {
  gate_proj.append_parameters(out);
  up_proj.append_parameters(out);
  down_proj.append_parameters(out);
}

}  // namespace zt::nn
