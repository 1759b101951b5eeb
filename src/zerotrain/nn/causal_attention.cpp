// Attention core (see causal_attention.h).
#include "zerotrain/nn/causal_attention.h"

#include <utility>

#include "zerotrain/core/error.h"

namespace zt::nn {

CausalAttention::CausalAttention(std::unique_ptr<Rotary> rotary, int64_t window)
    : rotary_(std::move(rotary)) {
  options_.window = window;  // scale: the kernel's default 1/sqrt(D), as every family uses
}

Tensor CausalAttention::forward(Tensor q, Tensor k, Tensor v, const RowDocuments& documents,
                                Stream stream) {
  options_.doc_starts = documents.starts;
  position_ids_ = documents.position_ids;
  if (rotary_) {
    rotary_->forward(q, position_ids_, stream);
    rotary_->forward(k, position_ids_, stream);
  }
  const int64_t b = q.size(0), s = q.size(1), h = q.size(2);
  Tensor out = Tensor::empty(q.shape(), q.dtype(), q.device(), stream);
  Tensor lse = Tensor::empty({b, h, s}, DType::f32, q.device(), stream);
  kernels::attention_forward(q, k, v, out, lse, options_, stream);
  q_ = std::move(q);
  k_ = std::move(k);
  v_ = std::move(v);
  out_ = out;
  lse_ = std::move(lse);
  return out;
}

void CausalAttention::backward(const Tensor& dout, Tensor& dq, Tensor& dk, Tensor& dv,
                               Stream stream) {
  if (!q_.defined()) throw ValueError("attention", "backward without a saved forward");
  kernels::attention_backward(q_, k_, v_, out_, lse_, dout, dq, dk, dv, options_, stream);
  if (rotary_) {
    rotary_->backward(dq, position_ids_, stream);
    rotary_->backward(dk, position_ids_, stream);
  }
}

void CausalAttention::release() {
  q_ = k_ = v_ = out_ = lse_ = position_ids_ = options_.doc_starts = {};
}

}  // namespace zt::nn
