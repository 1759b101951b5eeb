// A residual branch of a decoder layer (attention or MLP): [N, C] -> [N, C] with its own
// parameters and saved activations. The decoder layer picks one implementation per family once.
#pragma once

#include <cstdint>
#include <vector>

#include "zerotrain/core/tensor.h"
#include "zerotrain/nn/parameter.h"
#include "zerotrain/nn/row_documents.h"

namespace zt::nn {

// The token grid a flattened [N, C] activation comes from: N = batch * seq; for packed rows also
// their documents, which attention reads ([Note: packed documents] in nn/row_documents.h).
struct TokenDims {
  int64_t batch = 0;
  int64_t seq = 0;
  RowDocuments documents;  // empty: every row is one stream
  int64_t tokens() const { return batch * seq; }
};

class Sublayer {
 public:
  virtual ~Sublayer() = default;
  // x: [N, C] in the compute dtype -> [N, C]; keeps what backward needs.
  virtual Tensor forward(const Tensor& x, TokenDims dims, Stream stream) = 0;
  // dy: [N, C] -> dx [N, C]; adds parameter gradients; drops the saved activations.
  virtual Tensor backward(const Tensor& dy, Stream stream) = 0;
  virtual void release() = 0;
  // Whether the next forward keeps what its backward would otherwise recompute: set while
  // activation checkpointing recomputes the layer, whose backward follows at once, so the kept
  // tensors cost one layer's memory instead of every layer's. See [Note: recompute keeps more].
  virtual void keep_recomputable(bool) {}
  // Hugging Face's named_parameters() order.
  virtual void append_parameters(std::vector<Parameter*>& out) = 0;
};

}  // namespace zt::nn
