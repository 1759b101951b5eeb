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
  // Activation checkpointing's recomputation, right before this sublayer's backward: rebuilds what
  // the backward reads, and may keep more (what the backward would otherwise compute a third time)
  // and skip the work that only makes the output, which the caller does not need.
  // See [Note: recompute keeps more] in nn/block_runner.h.
  virtual void recompute(const Tensor& x, TokenDims dims, Stream stream) {
    forward(x, dims, stream);
  }
  // Hugging Face's named_parameters() order.
  virtual void append_parameters(std::vector<Parameter*>& out) = 0;
};

}  // namespace zt::nn
