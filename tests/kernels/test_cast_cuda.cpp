// CUDA cast against the CPU cast, bit for bit: all nine pairs at odd and real sizes (vocab 128256),
// every 16-bit pattern, random f32 bit patterns (NaN payloads included), misaligned views that take
// the scalar head/tail paths, and a non-default stream. Each test skips without a GPU.
#include <gtest/gtest.h>

#include <random>

#include "kernels/reference_cast.h"
#include "support/test_util.h"
#include "zerotrain/core/stream.h"
#include "zerotrain/kernels/cast.h"

namespace zt {
namespace {

constexpr DType kTypes[] = {DType::f32, DType::f16, DType::bf16};

// Casts host tensor `src` to `to` on the CPU and on the GPU (on `stream`) and expects equal bytes.
void expect_gpu_matches_cpu(const Tensor& src, DType to, const std::string& what,
                            Stream stream = {}) {
  Tensor want = Tensor::empty(src.shape(), to);
  kernels::cast(src, want);
  const Device gpu = Device::cuda(0);
  Tensor dsrc = src.to(gpu, stream);
  Tensor got = Tensor::empty(src.shape(), to, gpu, stream);
  kernels::cast(dsrc, got, stream);
  synchronize(stream);
  test::expect_bitwise_equal(
      want, got,
      what + " " + std::string(dtype_name(src.dtype())) + " -> " + std::string(dtype_name(to)));
}

TEST(CastCuda, AllPairsMatchCpu) {
  ZT_SKIP_WITHOUT_CUDA();
  for (size_t n : {size_t{1}, size_t{7}, size_t{37}, size_t{1037}, size_t{128256} * 8 + 5}) {
    const std::vector<float> values = test::cast_inputs(n, 3 + n);
    for (DType from : kTypes)
      for (DType to : kTypes)
        expect_gpu_matches_cpu(test::host_tensor(values, from), to, str("n=", n));
  }
}

TEST(CastCuda, Every16BitPatternMatchesCpu) {
  ZT_SKIP_WITHOUT_CUDA();
  for (DType from : {DType::f16, DType::bf16}) {
    Tensor src = Tensor::empty({65536}, from);
    auto* bits = static_cast<uint16_t*>(src.data());
    for (uint32_t i = 0; i < 65536; ++i)
      bits[i] = static_cast<uint16_t>(i);
    for (DType to : kTypes)
      expect_gpu_matches_cpu(src, to, "all patterns");
  }
}

TEST(CastCuda, RandomF32BitPatternsMatchCpu) {
  ZT_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(99);
  Tensor src = Tensor::empty({1 << 20}, DType::f32);
  auto* bits = static_cast<uint32_t*>(src.data());
  for (int64_t i = 0; i < src.numel(); ++i)
    bits[i] = rng();
  for (DType to : kTypes)
    expect_gpu_matches_cpu(src, to, "random bits");
}

TEST(CastCuda, MisalignedViewsMatchCpu) {
  ZT_SKIP_WITHOUT_CUDA();
  const int64_t n = 4099;
  const std::vector<float> values = test::cast_inputs(n + 8, 21);
  const Device gpu = Device::cuda(0);
  for (DType from : kTypes)
    for (DType to : kTypes)
      for (int64_t src_off : {0, 1, 3})
        for (int64_t dst_off : {0, 1, 2}) {
          const Tensor host = test::host_tensor(values, from);
          Tensor src = host.to(gpu).slice(0, src_off, src_off + n);
          Tensor dst_buf = Tensor::empty({n + 8}, to, gpu);
          Tensor dst = dst_buf.slice(0, dst_off, dst_off + n);
          kernels::cast(src, dst);
          Tensor want = Tensor::empty({n}, to);
          kernels::cast(host.slice(0, src_off, src_off + n), want);
          test::expect_bitwise_equal(
              want, dst,
              str(dtype_name(from), " -> ", dtype_name(to), " offsets ", src_off, "/", dst_off));
        }
}

TEST(CastCuda, RunsOnTheCallersStream) {
  ZT_SKIP_WITHOUT_CUDA();
  CudaStream stream(Device::cuda(0));
  const std::vector<float> values = test::cast_inputs(300007, 5);
  expect_gpu_matches_cpu(test::host_tensor(values, DType::f32), DType::bf16, "stream", stream);
  expect_gpu_matches_cpu(test::host_tensor(values, DType::bf16), DType::f16, "stream", stream);
}

TEST(CastCuda, CastToKeepsDeviceAndSkipsSameDtype) {
  ZT_SKIP_WITHOUT_CUDA();
  Tensor src = test::random_tensor({4, 33}, DType::f32, 8, -1, 1, Device::cuda(0));
  EXPECT_EQ(kernels::cast_to(src, DType::f32).data(), src.data());
  Tensor half = kernels::cast_to(src, DType::f16);
  EXPECT_EQ(half.device(), Device::cuda(0));
  EXPECT_EQ(half.shape(), src.shape());
  Tensor back = kernels::cast_to(half, DType::f32);
  test::expect_close(test::to_doubles(src), back, test::tolerance_for(DType::f16), "f32->f16->f32");
}

TEST(CastCuda, MixedDevicesThrow) {
  ZT_SKIP_WITHOUT_CUDA();
  Tensor src = Tensor::empty({5}, DType::f32);
  Tensor dst = Tensor::empty({5}, DType::bf16, Device::cuda(0));
  try {
    kernels::cast(src, dst);
    FAIL() << "expected DeviceError";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("[cast] dst bf16[5] on cuda:0 and src f32[5] on cpu"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace zt
