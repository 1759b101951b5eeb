// CUDA GEMM (cuBLASLt) against the float64 reference: the full transpose x dtype x C dtype x bias x
// beta grid at odd sizes (beta == 0 cases start from a NaN-filled C), a large bf16 nn.Linear-shaped
// product with bias, an f32 product accurate enough to rule out TF32, misaligned operands, a
// non-default stream, no allocation on repeated calls, K == 0, and mixed-device errors.
// Each test skips without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <tuple>

#include "kernels/reference_gemm.h"
#include "support/test_util.h"
#include "zerotrain/core/allocator.h"
#include "zerotrain/core/stream.h"
#include "zerotrain/kernels/gemm.h"

namespace zt {
namespace {

using kernels::GemmOptions;
using test::GemmCase;

const Device kGpu = Device::cuda(0);

void run_grid(DType ab) {
  uint64_t seed = 500;
  for (auto [m, n, k] :
       {std::tuple<int64_t, int64_t, int64_t>{37, 53, 29}, {1, 1, 1}, {5, 1, 70}, {64, 96, 128}})
    for (const GemmCase& g : test::gemm_grid(ab, m, n, k)) {
      test::check_gemm_case(g, kGpu, seed += 10);
      if (::testing::Test::HasFailure()) return;
    }
}

TEST(GemmCuda, F32Grid) {
  ZT_SKIP_WITHOUT_CUDA();
  run_grid(DType::f32);
}
TEST(GemmCuda, Bf16Grid) {
  ZT_SKIP_WITHOUT_CUDA();
  run_grid(DType::bf16);
}
TEST(GemmCuda, F16Grid) {
  ZT_SKIP_WITHOUT_CUDA();
  run_grid(DType::f16);
}

TEST(GemmCuda, LargeBf16LinearWithBias) {
  ZT_SKIP_WITHOUT_CUDA();
  // x[1024, 2048] @ W[4096, 2048]^T + b[4096], the nn.Linear layout; 24 rows checked.
  GemmCase g;
  g.m = 1024;
  g.n = 4096;
  g.k = 2048;
  g.trans_b = true;
  g.ab = DType::bf16;
  g.c = DType::bf16;
  g.bias = true;
  test::check_gemm_case(g, kGpu, 1, 24);
  g.c = DType::f32;
  g.beta = 1.0f;
  test::check_gemm_case(g, kGpu, 2, 24);
}

TEST(GemmCuda, F32IsFullPrecision) {
  ZT_SKIP_WITHOUT_CUDA();
  // TF32 would miss this tolerance by two orders of magnitude.
  GemmCase g;
  g.m = 300;
  g.n = 517;
  g.k = 1999;
  g.bias = true;
  g.beta = 0.25f;
  test::check_gemm_case(g, kGpu, 3, 16);
  g.trans_a = true;
  g.trans_b = true;
  test::check_gemm_case(g, kGpu, 4, 16);
}

TEST(GemmCuda, MisalignedOperands) {
  ZT_SKIP_WITHOUT_CUDA();
  const int64_t m = 24, n = 40, k = 56;
  for (DType dt : {DType::bf16, DType::f32})
    for (int64_t off : {1, 3}) {
      // Views starting `off` elements into their buffers: 2- or 4-byte aligned only.
      auto shifted = [&](const Tensor& t) {
        Tensor buf = Tensor::empty({t.numel() + off}, t.dtype(), kGpu);
        Tensor v = buf.slice(0, off, off + t.numel()).view(t.shape());
        v.copy_from(t);
        return v;
      };
      Tensor a = test::random_tensor({m, k}, dt, 10 + off);
      Tensor b = test::random_tensor({k, n}, dt, 20 + off);
      Tensor bias = test::random_tensor({n}, dt, 30 + off);
      Tensor c = shifted(Tensor::zeros({m, n}, dt));
      Tensor bias_d = shifted(bias);
      GemmOptions opt;
      opt.bias = &bias_d;
      kernels::gemm(shifted(a), shifted(b), c, opt);
      Tensor want = Tensor::empty({m, n}, dt);
      GemmOptions host_opt;
      host_opt.bias = &bias;
      kernels::gemm(a, b, want, host_opt);
      test::expect_close(test::to_doubles(want), c, test::tolerance_for(dt),
                         str(dtype_name(dt), " offset ", off));
    }
}

TEST(GemmCuda, RunsOnTheCallersStream) {
  ZT_SKIP_WITHOUT_CUDA();
  CudaStream stream(kGpu);
  const int64_t m = 67, n = 129, k = 260;
  Tensor a = test::random_tensor({m, k}, DType::bf16, 40);
  Tensor b = test::random_tensor({n, k}, DType::bf16, 41);
  Tensor want = Tensor::empty({m, n}, DType::f32);
  GemmOptions opt;
  opt.trans_b = true;
  kernels::gemm(a, b, want, opt);
  Tensor c = Tensor::empty({m, n}, DType::f32, kGpu, stream);
  kernels::gemm(a.to(kGpu, stream), b.to(kGpu, stream), c, opt, stream);
  synchronize(stream);
  test::expect_close(test::to_doubles(want), c, test::tolerance_for(DType::f32), "stream");
}

TEST(GemmCuda, RepeatedCallsAllocateNothingAndAreDeterministic) {
  ZT_SKIP_WITHOUT_CUDA();
  Tensor a = test::random_tensor({256, 512}, DType::bf16, 50, -1, 1, kGpu);
  Tensor b = test::random_tensor({768, 512}, DType::bf16, 51, -1, 1, kGpu);
  Tensor bias = test::random_tensor({768}, DType::bf16, 52, -1, 1, kGpu);
  Tensor c = Tensor::empty({256, 768}, DType::bf16, kGpu);
  Tensor first = Tensor::empty({256, 768}, DType::bf16, kGpu);
  GemmOptions opt;
  opt.trans_b = true;
  opt.bias = &bias;
  kernels::gemm(a, b, first, opt);
  const AllocatorStats before = cuda_allocator(0).stats();
  for (int i = 0; i < 5; ++i)
    kernels::gemm(a, b, c, opt);
  const AllocatorStats after = cuda_allocator(0).stats();
  EXPECT_EQ(after.num_allocs, before.num_allocs);
  test::expect_bitwise_equal(first, c, "repeated gemm");
}

TEST(GemmCuda, EmptyInnerDimensionScalesCAndAddsBias) {
  ZT_SKIP_WITHOUT_CUDA();
  Tensor a = Tensor::empty({3, 0}, DType::bf16, kGpu);
  Tensor b = Tensor::empty({0, 2}, DType::bf16, kGpu);
  Tensor c = Tensor::from_floats({1, 2, 3, 4, 5, 6}, {3, 2}, DType::f32, kGpu);
  Tensor bias = Tensor::from_floats({10, 20}, {2}, DType::f32, kGpu);
  GemmOptions opt;
  opt.beta = 0.5f;
  opt.bias = &bias;
  kernels::gemm(a, b, c, opt);
  EXPECT_EQ(c.to_floats(), (std::vector<float>{10.5f, 21, 11.5f, 22, 12.5f, 23}));
  c.fill(std::nan(""));
  opt.beta = 0.0f;
  kernels::gemm(a, b, c, opt);
  EXPECT_EQ(c.to_floats(), (std::vector<float>{10, 20, 10, 20, 10, 20}));
}

TEST(GemmCuda, MixedDevicesThrow) {
  ZT_SKIP_WITHOUT_CUDA();
  Tensor a = Tensor::empty({2, 3}, DType::bf16, kGpu);
  Tensor b = Tensor::empty({3, 4}, DType::bf16);
  Tensor c = Tensor::empty({2, 4}, DType::bf16, kGpu);
  try {
    kernels::gemm(a, b, c);
    FAIL() << "expected DeviceError";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("[gemm] b bf16[3, 4] on cpu and a bf16[2, 3] on cuda:0"),
              std::string::npos)
        << e.what();
  }
  Tensor bias = Tensor::empty({4}, DType::bf16);
  Tensor bd = Tensor::empty({3, 4}, DType::bf16, kGpu);
  GemmOptions opt;
  opt.bias = &bias;
  EXPECT_THROW(kernels::gemm(a, bd, c, opt), DeviceError);
}

}  // namespace
}  // namespace zt
