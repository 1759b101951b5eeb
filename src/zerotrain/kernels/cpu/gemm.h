// CPU matrix multiply through OpenBLAS sgemm (see kernels/gemm.h for the contract).
#pragma once

#include "zerotrain/core/tensor.h"
#include "zerotrain/kernels/gemm.h"

namespace zt::kernels::cpu {

// Arguments already validated by the front-end: a, b, c 2-D, contiguous, on the host, a/b of one
// float dtype, c of that dtype or f32, opt.bias (if any) [N] with c's dtype.
void gemm(const Tensor& a, const Tensor& b, Tensor& c, const GemmOptions& opt);

}  // namespace zt::kernels::cpu
