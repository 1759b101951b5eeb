// Argument checks the blocks share: the hidden states a block receives and the step's token grids.
// Errors name the block and show the tensor.
#pragma once

#include <string>

#include "zerotrain/nn/block.h"
#include "zerotrain/nn/sublayer.h"

namespace zt::nn {

// x: contiguous [B, S, hidden] in ctx.compute_dtype. Returns {B, S}.
TokenDims check_hidden_states(const std::string& block, const Tensor& x, int64_t hidden,
                              const StepContext& ctx, const char* what = "input");
// ids: defined, contiguous, i32/i64, [B, S]. Returns {B, S}.
TokenDims check_token_grid(const std::string& block, const Tensor& ids, const char* field);

}  // namespace zt::nn
