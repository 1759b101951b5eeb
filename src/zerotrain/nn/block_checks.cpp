// Shared block argument checks (see block_checks.h).
#include "zerotrain/nn/block_checks.h"

#include "zerotrain/core/error.h"

namespace zt::nn {

TokenDims check_hidden_states(const std::string& block, const Tensor& x, int64_t hidden,
                              const StepContext& ctx, const char* what) {
  if (!x.defined()) throw ValueError("nn", str(block, ": ", what, " is undefined"));
  if (x.dim() != 3 || x.size(2) != hidden || !x.is_contiguous())
    throw ShapeError("nn", str(block, ": ", what, " ", x.describe(),
                               " must be a contiguous [B, S, ", hidden, "]"));
  if (x.dtype() != ctx.compute_dtype)
    throw DTypeError("nn", str(block, ": ", what, " ", x.describe(),
                               " is not in the compute dtype ", dtype_name(ctx.compute_dtype)));
  return {x.size(0), x.size(1), {}};
}

TokenDims check_token_grid(const std::string& block, const Tensor& ids, const char* field) {
  if (!ids.defined()) throw ValueError("nn", str(block, ": ctx.", field, " is undefined"));
  if (ids.dim() != 2 || !ids.is_contiguous() ||
      (ids.dtype() != DType::i32 && ids.dtype() != DType::i64))
    throw ShapeError("nn", str(block, ": ctx.", field, " ", ids.describe(),
                               " must be a contiguous i32/i64 [B, S]"));
  return {ids.size(0), ids.size(1), {}};
}

}  // namespace zt::nn
