// Front-end of the random normal fill: argument checks, then the CPU or CUDA kernel.
// Tested by tests/kernels/test_random_normal.cpp (CPU) and test_random_normal_cuda.cpp.
#include "zerotrain/kernels/random_normal.h"

#include "zerotrain/core/checked_math.h"
#include "zerotrain/kernels/check.h"
#include "zerotrain/kernels/cpu/random_normal.h"
#include "zerotrain/kernels/cuda/random_normal.h"
#include "zerotrain/kernels/dispatch.h"

namespace zt::kernels {

void random_normal(Tensor& dst, uint64_t seed, uint64_t stream_id, int64_t first, float std,
                   Stream stream) {
  constexpr const char* op = "random_normal";
  check_defined(op, "dst", dst);
  check_contiguous(op, "dst", dst);
  check_dtype(op, "dst", dst, kFloatTypes);
  if (first < 0) throw ValueError(op, str("first element must be >= 0, got ", first));
  if (!checked_add(first, dst.numel()))
    throw ValueError(op,
                     str("elements [", first, ", ", first, " + ", dst.numel(), ") overflow int64"));
  if (dst.numel() == 0) return;
  if (dst.device().is_cuda())
    ZT_ON_CUDA(op, cuda::random_normal(dst, seed, stream_id, first, std, stream));
  else
    cpu::random_normal(dst, seed, stream_id, first, std);
}

}  // namespace zt::kernels
