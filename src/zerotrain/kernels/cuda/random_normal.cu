// CUDA random normal fill: one thread per block of four elements of the stream (grid-stride), the
// generator and transform of kernels/philox.h evaluated with _rn intrinsics, then rounded to the
// destination dtype with the hardware's round-to-nearest-even (the values are finite, so this is
// core/half.h's rounding). Bitwise equal to the CPU fill:
// tests/kernels/test_random_normal_cuda.cpp.
#include "zerotrain/kernels/cuda/random_normal.h"

#include "zerotrain/core/cuda/cuda_check.h"
#include "zerotrain/core/cuda/dispatch.cuh"
#include "zerotrain/kernels/philox.h"

namespace zt::kernels::cuda {

namespace {

template <typename T>
__global__ void random_normal_kernel(T* dst, long long n, unsigned long long seed,
                                     unsigned long long stream_id, long long first,
                                     unsigned long long first_block, long long blocks, float std) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long b = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; b < blocks;
       b += stride) {
    const unsigned long long block = first_block + static_cast<unsigned long long>(b);
    float z[4];
    philox::normal_block(seed, stream_id, block, z);
    const long long base = static_cast<long long>(block * 4) - first;
#pragma unroll
    for (int lane = 0; lane < 4; ++lane) {
      const long long i = base + lane;
      if (i >= 0 && i < n) dst[i] = zt::dev::from_f<T>(philox::mul_rn(std, z[lane]));
    }
  }
}

}  // namespace

void random_normal(Tensor& dst, uint64_t seed, uint64_t stream_id, int64_t first, float std,
                   Stream stream) {
  const long long n = dst.numel();
  const unsigned long long first_block = static_cast<unsigned long long>(first) / 4;
  const unsigned long long end_block = (static_cast<unsigned long long>(first + n) + 3) / 4;
  const auto blocks = static_cast<long long>(end_block - first_block);
  constexpr int threads = 256;
  CudaDeviceGuard guard(dst.device());
  ZT_DISPATCH_FLOAT(dst.dtype(), "random_normal", scalar_t, {
    random_normal_kernel<scalar_t>
        <<<zt::dev::blocks_for(blocks, threads), threads, 0, to_cuda(stream)>>>(
            static_cast<scalar_t*>(dst.data()), n, seed, stream_id, first, first_block, blocks,
            std);
  });
  ZT_CUDA_CHECK_LAUNCH();
}

}  // namespace zt::kernels::cuda
