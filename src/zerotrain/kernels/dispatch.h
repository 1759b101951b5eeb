// Backend selection for kernel front-ends:
//   if (x.device().is_cuda()) ZT_ON_CUDA("rmsnorm", cuda::rmsnorm_forward(x, w, y, rstd, eps, s));
//   else cpu::rmsnorm_forward(x, w, y, rstd, eps);
// In a CPU-only build the CUDA call is compiled out and the op throws DeviceError instead.
#pragma once

#include "zerotrain/core/error.h"

#if ZT_WITH_CUDA
#define ZT_ON_CUDA(op, ...) \
  do {                      \
    __VA_ARGS__;            \
  } while (0)
#else
#define ZT_ON_CUDA(op, ...) ::zt::throw_no_cuda(op)
#endif
