// Embedding table lookup ("<prefix>.weight" [rows, C]), forward and backward over
// kernels/embedding.h: used for the token embedding (every family) and GPT-2's learned positions.
// The gradient scatter is deterministic (rows sharing an id are summed in token order).
// Tested by tests/nn/test_embedding_layer.cpp.
#pragma once

#include <string>

#include "zerotrain/nn/parameter.h"

namespace zt::nn {

class Embedding {
 public:
  Embedding(const std::string& prefix, int64_t rows, int64_t width);

  // ids: i32/i64 [N] on the table's device -> [N, C] in the table's dtype. An id outside the
  // table throws ValueError naming it.
  Tensor forward(const Tensor& ids, Stream stream) const;
  // Adds the scatter of dy [N, C] by ids into weight.grad (unless frozen).
  void backward(const Tensor& ids, const Tensor& dy, Stream stream);

  Parameter weight;
};

}  // namespace zt::nn
