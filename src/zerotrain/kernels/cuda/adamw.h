// CUDA AdamW (see kernels/adamw.h for the contract): one vectorized grid-stride pass over the
// flat buffers. Arguments are already checked by the front-end; the per-step scalars come from
// cpu::adamw_scalars so that both backends round them identically.
// Tested by tests/kernels/test_adamw_cuda.cpp.
#pragma once

#include "zerotrain/core/stream.h"
#include "zerotrain/core/tensor.h"
#include "zerotrain/kernels/cpu/adamw.h"

namespace zt::kernels::cuda {

void adamw_step(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const cpu::AdamWScalars& s,
                Tensor* param_copy, Stream stream);

}  // namespace zt::kernels::cuda
