// Llama-family attention (see self_attention.h).
#include "zerotrain/nn/self_attention.h"

#include <memory>

#include "zerotrain/core/error.h"

namespace zt::nn {

SelfAttention::SelfAttention(const std::string& prefix, const ModelConfig& c,
                             const Architecture& arch)
    : q_proj(prefix + ".q_proj", c.hidden_size, c.num_heads * c.head_dim, arch.qkv_bias),
      k_proj(prefix + ".k_proj", c.hidden_size, c.num_kv_heads * c.head_dim, arch.qkv_bias),
      v_proj(prefix + ".v_proj", c.hidden_size, c.num_kv_heads * c.head_dim, arch.qkv_bias),
      o_proj(prefix + ".o_proj", c.num_heads * c.head_dim, c.hidden_size, arch.o_bias),
      heads_(c.num_heads),
      kv_heads_(c.num_kv_heads),
      head_dim_(c.head_dim),
      core_(std::make_unique<Rotary>(c), arch.sliding_window ? c.sliding_window : 0) {}

Tensor SelfAttention::forward(const Tensor& x, TokenDims dims, Stream stream) {
  const int64_t b = dims.batch, s = dims.seq;
  Tensor q = q_proj.forward(x, stream).view({b, s, heads_, head_dim_});
  Tensor k = k_proj.forward(x, stream).view({b, s, kv_heads_, head_dim_});
  Tensor v = v_proj.forward(x, stream).view({b, s, kv_heads_, head_dim_});
  out_ = core_.forward(q, k, v, dims.documents, stream).view({dims.tokens(), heads_ * head_dim_});
  x_ = x;
  dims_ = dims;
  return o_proj.forward(out_, stream);
}

Tensor SelfAttention::backward(const Tensor& dy, Stream stream) {
  if (!x_.defined())
    throw ValueError("attention", str(q_proj.weight.name, ": backward without a saved forward"));
  const int64_t b = dims_.batch, s = dims_.seq, n = dims_.tokens();
  const Device dev = x_.device();
  const DType dt = x_.dtype();
  Tensor dout = Tensor::empty(out_.shape(), dt, dev, stream);
  o_proj.backward(out_, dy, &dout, false, stream);
  Tensor dq = Tensor::empty({b, s, heads_, head_dim_}, dt, dev, stream);
  Tensor dk = Tensor::empty({b, s, kv_heads_, head_dim_}, dt, dev, stream);
  Tensor dv = Tensor::empty({b, s, kv_heads_, head_dim_}, dt, dev, stream);
  core_.backward(dout.view({b, s, heads_, head_dim_}), dq, dk, dv, stream);
  dout = {};
  Tensor dx = Tensor::empty(x_.shape(), dt, dev, stream);
  q_proj.backward(x_, dq.view({n, heads_ * head_dim_}), &dx, false, stream);
  k_proj.backward(x_, dk.view({n, kv_heads_ * head_dim_}), &dx, true, stream);
  v_proj.backward(x_, dv.view({n, kv_heads_ * head_dim_}), &dx, true, stream);
  release();
  return dx;
}

void SelfAttention::release() {
  core_.release();
  x_ = out_ = {};
}

void SelfAttention::append_parameters(std::vector<Parameter*>& out) {
  q_proj.append_parameters(out);
  k_proj.append_parameters(out);
  v_proj.append_parameters(out);
  o_proj.append_parameters(out);
}

}  // namespace zt::nn
