// The CUDA random normal fill against the CPU one, bit for bit: every dtype, ranges starting at
// each lane of a block, a size past one grid's worth of threads, a start past 2^32 elements, and a
// non-default stream. Each test skips without a GPU.
#include <gtest/gtest.h>

#include "support/test_util.h"
#include "zerotrain/core/stream.h"
#include "zerotrain/kernels/random_normal.h"

namespace zt {
namespace {

void expect_gpu_matches_cpu(int64_t first, int64_t n, DType dtype, Stream stream = {}) {
  Tensor want = Tensor::empty({n}, dtype);
  kernels::random_normal(want, 1234, 0xABCDEF0123456789ull, first, 0.02f);
  Tensor got = Tensor::empty({n}, dtype, Device::cuda(0), stream);
  kernels::random_normal(got, 1234, 0xABCDEF0123456789ull, first, 0.02f, stream);
  synchronize(stream);
  test::expect_bitwise_equal(want, got, str(dtype_name(dtype), " [", first, ", ", first + n, ")"));
}

TEST(RandomNormalCuda, MatchesCpuBitwise) {
  ZT_SKIP_WITHOUT_CUDA();
  for (DType dtype : {DType::f32, DType::f16, DType::bf16})
    for (int64_t first : {0, 1, 2, 3, 4, 4097})
      for (int64_t n : {1, 2, 5, 1003})
        expect_gpu_matches_cpu(first, n, dtype);
  expect_gpu_matches_cpu(0, int64_t{128256} * 2048 + 3, DType::f32);  // grid-stride loop
  expect_gpu_matches_cpu((int64_t{1} << 33) + 1, 100001, DType::bf16);
}

TEST(RandomNormalCuda, RunsOnTheGivenStream) {
  ZT_SKIP_WITHOUT_CUDA();
  CudaStream s(Device::cuda(0));
  expect_gpu_matches_cpu(7, 1 << 20, DType::bf16, s.get());
}

}  // namespace
}  // namespace zt
