// GPT-2 attention (see gpt2_attention.h). c_attn's output [N, 3C] holds q, k, v side by side; one
// strided copy regroups it as [3, N, C] so each of q, k, v is a contiguous [B, S, H, D] for the
// kernel, and backward packs dq, dk, dv back into [N, 3C] the same way.
#include "zerotrain/nn/gpt2_attention.h"

#include "zerotrain/core/error.h"

namespace zt::nn {

Gpt2Attention::Gpt2Attention(const std::string& prefix, const ModelConfig& c)
    : c_attn(prefix + ".c_attn", c.hidden_size, 3 * c.hidden_size, true, WeightLayout::in_out),
      c_proj(prefix + ".c_proj", c.hidden_size, c.hidden_size, true, WeightLayout::in_out),
      heads_(c.num_heads),
      head_dim_(c.head_dim),
      core_(nullptr, 0) {}

Tensor Gpt2Attention::forward(const Tensor& x, TokenDims dims, Stream stream) {
  const int64_t b = dims.batch, s = dims.seq, n = dims.tokens(), c = heads_ * head_dim_;
  Tensor qkv = c_attn.forward(x, stream).view({n, 3, c}).transpose(0, 1).contiguous(stream);
  auto part = [&](int64_t i) { return qkv.select(0, i).view({b, s, heads_, head_dim_}); };
  out_ = core_.forward(part(0), part(1), part(2), dims.documents, stream).view({n, c});
  x_ = x;
  dims_ = dims;
  return c_proj.forward(out_, stream);
}

Tensor Gpt2Attention::backward(const Tensor& dy, Stream stream) {
  if (!x_.defined())
    throw ValueError("attention", str(c_attn.weight.name, ": backward without a saved forward"));
  const int64_t b = dims_.batch, s = dims_.seq, n = dims_.tokens(), c = heads_ * head_dim_;
  const Device dev = x_.device();
  const DType dt = x_.dtype();
  Tensor dout = Tensor::empty({n, c}, dt, dev, stream);
  c_proj.backward(out_, dy, &dout, false, stream);
  Tensor dparts = Tensor::empty({3, n, c}, dt, dev, stream);  // [dq | dk | dv] as [3, N, C]
  auto part = [&](int64_t i) { return dparts.select(0, i).view({b, s, heads_, head_dim_}); };
  Tensor dq = part(0), dk = part(1), dv = part(2);
  core_.backward(dout.view({b, s, heads_, head_dim_}), dq, dk, dv, stream);
  dout = {};
  Tensor dqkv = dparts.transpose(0, 1).contiguous(stream).view({n, 3 * c});
  dparts = {};
  Tensor dx = Tensor::empty(x_.shape(), dt, dev, stream);
  c_attn.backward(x_, dqkv, &dx, false, stream);
  release();
  return dx;
}

void Gpt2Attention::release() {
  core_.release();
  x_ = out_ = {};
}

void Gpt2Attention::append_parameters(std::vector<Parameter*>& out) {
  c_attn.append_parameters(out);
  c_proj.append_parameters(out);
}

}  // namespace zt::nn
