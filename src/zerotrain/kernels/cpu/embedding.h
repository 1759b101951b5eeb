// CPU token embedding lookup and gradient. Arguments are validated by the front-end
// (kernels/embedding.cpp); see kernels/embedding.h for the contract. Tested by
// tests/kernels/test_embedding.cpp.
#pragma once

#include "zerotrain/core/tensor.h"

namespace zt::kernels::cpu {

// Returns the first token whose id is outside [0, V), or -1. Rows of such tokens are zero-filled.
int64_t embedding_forward(const Tensor& ids, const Tensor& table, Tensor& out);
// Returns the first token whose id is outside [0, V) (and then leaves dtable untouched), or -1.
int64_t embedding_backward(const Tensor& ids, const Tensor& dout, Tensor& dtable);

}  // namespace zt::kernels::cpu
