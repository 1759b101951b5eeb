// CUDA matrix multiply through cuBLASLt (see kernels/gemm.h for the contract).
#pragma once

#include "zerotrain/core/stream.h"
#include "zerotrain/core/tensor.h"
#include "zerotrain/kernels/gemm.h"

namespace zt::kernels::cuda {

// Arguments already validated by the front-end (as for cpu::gemm), all on one GPU. Enqueues on
// `stream` without synchronizing; after the first call for a given problem, it allocates nothing.
void gemm(const Tensor& a, const Tensor& b, Tensor& c, const GemmOptions& opt, Stream stream);

}  // namespace zt::kernels::cuda
