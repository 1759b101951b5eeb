// Embedding layer (see embedding.h).
#include "zerotrain/nn/embedding.h"

#include "zerotrain/kernels/embedding.h"
#include "zerotrain/nn/parameter_util.h"

namespace zt::nn {

Embedding::Embedding(const std::string& prefix, int64_t rows, int64_t width)
    : weight(make_parameter(prefix + ".weight", {rows, width}, ParamKind::embedding)) {}

Tensor Embedding::forward(const Tensor& ids, Stream stream) const {
  const Tensor& table = value_of(weight);
  Tensor out = Tensor::empty({ids.numel(), table.size(1)}, table.dtype(), table.device(), stream);
  kernels::embedding_forward(ids, table, out, /*check_ids=*/true, stream);
  return out;
}

void Embedding::backward(const Tensor& ids, const Tensor& dy, Stream stream) {
  if (wants_grad(weight)) kernels::embedding_backward(ids, dy, weight.grad, stream);
}

}  // namespace zt::nn
