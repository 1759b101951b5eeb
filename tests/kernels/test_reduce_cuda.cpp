// CUDA reductions against the CPU backend (which accumulates in f64) on the same inputs, with a
// tolerance for the different summation order; run-to-run bitwise equality; bitwise equality
// between an aligned tensor and a misaligned copy (same order on both load paths); NaN
// propagation; many small tensors in global_l2_norm; device errors.
// Run (GPU): zerotrain_tests --gtest_filter='ReduceCuda.*'
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kernels/reference_reduce.h"
#include "kernels/ulp.h"
#include "support/test_util.h"
#include "zerotrain/core/stream.h"
#include "zerotrain/kernels/reduce.h"

namespace zt {
namespace {

constexpr DType kDTypes[] = {DType::f32, DType::f16, DType::bf16};
const Device kGpu = Device::cuda(0);
const float kNaN = std::numeric_limits<float>::quiet_NaN();

using ScalarOp = void (*)(const Tensor&, Tensor&, Stream);

// out = op(x) as an f32 [1] tensor on x's device (poisoned first).
Tensor run_scalar(ScalarOp op, const Tensor& x, Stream s = {}) {
  Tensor out = Tensor::empty({1}, DType::f32, x.device(), s);
  out.fill(-12345.0, s);
  op(x, out, s);
  return out;
}

Tensor run_l2(const std::vector<Tensor>& xs, Device d, Stream s = {}) {
  Tensor out = Tensor::empty({1}, DType::f32, d, s);
  out.fill(-12345.0, s);
  kernels::global_l2_norm(xs, out, s);
  return out;
}

float value(const Tensor& t) {
  return t.to_floats()[0];
}

// A contiguous copy of t starting one element into a buffer: never 16-byte aligned.
Tensor misaligned(const Tensor& t) {
  Tensor buf = Tensor::empty({t.numel() + 1}, t.dtype(), t.device());
  Tensor view = buf.slice(0, 1, t.numel() + 1).view(t.shape());
  view.copy_from(t);
  return view;
}

// f32 accumulation in any order: within 1e-5 of the sum of magnitudes.
void expect_sum_close(double got, double want, double abs_sum, const std::string& what) {
  EXPECT_LE(std::fabs(got - want), 1e-5 * abs_sum + 1e-30)
      << what << ": cuda " << got << ", cpu " << want;
}

TEST(ReduceCuda, SumAndMaxMatchCpu) {
  ZT_SKIP_WITHOUT_CUDA();
  for (DType dtype : kDTypes)
    for (int64_t n : {int64_t{1}, int64_t{7}, int64_t{1003}, int64_t{65537}, int64_t{1000000},
                      int64_t{4096} * 14336}) {
      if (n > 1000000 && dtype != DType::bf16) continue;
      const std::string what = str(dtype_name(dtype), "[", n, "]");
      Tensor x = test::random_tensor({n}, dtype, 301 + n, -1.f, 3.f);
      Tensor gx = x.to(kGpu);
      const double abs_sum = test::sum_ref(x).abs_sum;
      expect_sum_close(value(run_scalar(kernels::sum, gx)), value(run_scalar(kernels::sum, x)),
                       abs_sum, "sum " + what);
      EXPECT_EQ(value(run_scalar(kernels::max, gx)), value(run_scalar(kernels::max, x)))
          << "max " << what;
    }
}

TEST(ReduceCuda, ResultsAreBitwiseReproducibleAndAlignmentFree) {
  ZT_SKIP_WITHOUT_CUDA();
  for (DType dtype : kDTypes)
    for (int64_t n : {int64_t{1003}, int64_t{1000003}}) {
      const std::string what = str(dtype_name(dtype), "[", n, "]");
      Tensor gx = test::random_tensor({n}, dtype, 307, -1.f, 1.f, kGpu);
      Tensor moved = misaligned(gx);
      for (ScalarOp op : {ScalarOp{kernels::sum}, ScalarOp{kernels::max}}) {
        const Tensor first = run_scalar(op, gx);
        test::expect_bitwise_equal(first, run_scalar(op, gx), "rerun " + what);
        test::expect_bitwise_equal(first, run_scalar(op, moved), "misaligned copy " + what);
      }
      test::expect_bitwise_equal(run_l2({gx}, kGpu), run_l2({moved}, kGpu),
                                 "l2 misaligned " + what);
      Tensor m = gx.slice(0, 0, (n / 16) * 16).view({n / 16, 16});  // rows 16-byte aligned
      Tensor a = Tensor::empty({16}, DType::f32, kGpu), b = Tensor::empty({16}, DType::f32, kGpu);
      Tensor c = Tensor::empty({16}, DType::f32, kGpu);
      kernels::sum_rows(m, a);
      kernels::sum_rows(m, b);
      kernels::sum_rows(misaligned(m), c);
      test::expect_bitwise_equal(a, b, "sum_rows rerun " + what);
      test::expect_bitwise_equal(a, c, "sum_rows misaligned copy " + what);
    }
}

TEST(ReduceCuda, NaNPropagates) {
  ZT_SKIP_WITHOUT_CUDA();
  for (DType dtype : kDTypes)
    for (int64_t n : {int64_t{1}, int64_t{7}, int64_t{65537}, int64_t{1000003}}) {
      for (int64_t at : {int64_t{0}, n / 2, n - 1}) {
        std::vector<float> v = test::random_floats(static_cast<size_t>(n), 311);
        v[at] = kNaN;
        Tensor gx = Tensor::from_floats(v, {n}, dtype, kGpu);
        const std::string what = str(dtype_name(dtype), "[", n, "] NaN at ", at);
        for (const Tensor& t : {gx, misaligned(gx)}) {
          EXPECT_TRUE(std::isnan(value(run_scalar(kernels::sum, t)))) << "sum " << what;
          EXPECT_TRUE(std::isnan(value(run_scalar(kernels::max, t)))) << "max " << what;
          EXPECT_TRUE(std::isnan(value(run_l2({t}, kGpu)))) << "l2 " << what;
        }
      }
    }
}

TEST(ReduceCuda, EmptyInputs) {
  ZT_SKIP_WITHOUT_CUDA();
  EXPECT_EQ(value(run_scalar(kernels::sum, Tensor::empty({0}, DType::bf16, kGpu))), 0.f);
  EXPECT_EQ(value(run_l2({}, kGpu)), 0.f);
  EXPECT_EQ(value(run_l2({Tensor::empty({0}, DType::f32, kGpu)}, kGpu)), 0.f);
  Tensor sums = test::random_tensor({5}, DType::f32, 313, -1.f, 1.f, kGpu);
  kernels::sum_rows(Tensor::empty({0, 5}, DType::f32, kGpu), sums);
  EXPECT_EQ(sums.to_floats(), std::vector<float>(5, 0.f));
}

TEST(ReduceCuda, SumRowsMatchesCpu) {
  ZT_SKIP_WITHOUT_CUDA();
  const Shape shapes[] = {{1, 1}, {7, 3}, {1003, 65}, {8192, 768}, {100000, 3}, {4096, 4099}};
  for (DType dtype : kDTypes)
    for (const Shape& shape : shapes)
      for (DType out_dtype : {DType::f32, dtype})
        for (bool accumulate : {false, true}) {
          const std::string what = str("sum_rows ", dtype_name(dtype), to_string(shape), " -> ",
                                       dtype_name(out_dtype), accumulate ? " accumulate" : "");
          Tensor x = test::random_tensor(shape, dtype, 317, -1.f, 2.f);
          Tensor init = test::random_tensor({shape[1]}, out_dtype, 319, -4.f, 4.f);
          Tensor want = init.clone(), got = init.to(kGpu);
          kernels::sum_rows(x, want, accumulate);
          kernels::sum_rows(x.to(kGpu), got, accumulate);
          const auto ref =
              test::sum_rows_ref(x, accumulate ? test::to_doubles(init) : std::vector<double>{});
          const auto w = test::to_doubles(want), g = test::to_doubles(got);
          size_t bad = 0;
          for (size_t c = 0; c < w.size(); ++c) {
            // f32 order error, then (for a 16-bit output) one rounding step each side.
            double allowed = 1e-5 * ref[c].abs_sum + 1e-30;
            if (out_dtype != DType::f32) allowed += test::ulp_of(out_dtype, std::fabs(w[c]));
            if (!(std::fabs(w[c] - g[c]) <= allowed) && bad++ == 0)
              ADD_FAILURE() << what << " column " << c << ": cuda " << g[c] << ", cpu " << w[c];
          }
          EXPECT_EQ(bad, 0u) << what;
        }
}

std::vector<Tensor> many_tensors(int count, uint64_t seed) {
  std::vector<Tensor> xs;
  for (int i = 0; i < count; ++i) {
    Tensor t = test::random_tensor({1 + (i * 7919) % 50000}, kDTypes[i % 3], seed + i, -2.f, 2.f);
    xs.push_back(i % 5 == 4 ? misaligned(t.to(kGpu)) : t.to(kGpu));
    if (i % 11 == 0) xs.push_back(Tensor::empty({0}, DType::f32, kGpu));
  }
  return xs;
}

std::vector<Tensor> to_cpu(const std::vector<Tensor>& xs) {
  std::vector<Tensor> r;
  for (const Tensor& t : xs)
    r.push_back(t.to(Device::cpu()));
  return r;
}

TEST(ReduceCuda, GlobalL2NormMatchesCpu) {
  ZT_SKIP_WITHOUT_CUDA();
  std::vector<std::vector<Tensor>> lists = {
      {test::random_tensor({1}, DType::f32, 331, -1.f, 1.f, kGpu)},
      {test::random_tensor({7}, DType::bf16, 332, -1.f, 1.f, kGpu),
       test::random_tensor({1003}, DType::f16, 333, -1.f, 1.f, kGpu),
       test::random_tensor({4096, 14336}, DType::bf16, 334, -1.f, 1.f, kGpu),
       test::random_tensor({128256}, DType::f32, 335, -1.f, 1.f, kGpu)},
      many_tensors(5, 400),
      many_tensors(300, 700),  // more tensors than one launch carries
  };
  for (size_t l = 0; l < lists.size(); ++l) {
    const std::vector<Tensor>& xs = lists[l];
    const Tensor got = run_l2(xs, kGpu);
    const double want = value(run_l2(to_cpu(xs), Device::cpu()));
    EXPECT_LE(std::fabs(value(got) - want), 1e-5 * want)
        << "list " << l << ": cuda " << value(got) << ", cpu " << want;
    test::expect_bitwise_equal(got, run_l2(xs, kGpu), str("l2 rerun, list ", l));
  }
}

TEST(ReduceCuda, RunsOnTheGivenStream) {
  ZT_SKIP_WITHOUT_CUDA();
  CudaStream side(kGpu);
  Tensor gx = test::random_tensor({1000003}, DType::bf16, 341, -1.f, 1.f, kGpu);
  const Tensor want_sum = run_scalar(kernels::sum, gx), want_l2 = run_l2({gx}, kGpu);
  synchronize_device(kGpu);
  const Tensor got_sum = run_scalar(kernels::sum, gx, side), got_l2 = run_l2({gx}, kGpu, side);
  synchronize(side);
  test::expect_bitwise_equal(want_sum, got_sum, "sum on a side stream");
  test::expect_bitwise_equal(want_l2, got_l2, "l2 on a side stream");
}

// Per-chunk sums of squares (the ZeRO gradient norm) equal the CPU's on every visible GPU: the
// kernel must launch on its tensor's device, not the current one (ranks 1..N-1 of a job).
TEST(ReduceCuda, ChunkSumSquaresMatchesCpuOnEveryGpu) {
  ZT_SKIP_WITHOUT_CUDA();
  const Tensor hx = test::random_tensor({100003}, DType::bf16, 77, -1.f, 1.f);
  const int64_t chunk = 4096, chunks = (hx.numel() + chunk - 1) / chunk;
  Tensor want = Tensor::empty({chunks}, DType::f32);
  kernels::chunk_sum_squares(hx, chunk, want);
  for (int d = cuda_device_count(); d-- > 0;) {
    const Device dev = Device::cuda(d);
    const Tensor gx = hx.to(dev);
    Tensor got = Tensor::empty({chunks}, DType::f32, dev);
    kernels::chunk_sum_squares(gx, chunk, got, Stream::default_for(dev));
    const std::vector<float> g = got.to_floats(), w = want.to_floats();
    for (int64_t i = 0; i < chunks; ++i)
      EXPECT_NEAR(g[i], w[i], 1e-6 * w[i]) << "chunk " << i << " on cuda:" << d;
  }
}

TEST(ReduceCuda, MixedDevicesThrow) {
  ZT_SKIP_WITHOUT_CUDA();
  Tensor gx = Tensor::empty({5}, DType::f32, kGpu), hx = Tensor::empty({5}, DType::f32);
  Tensor gout = Tensor::empty({1}, DType::f32, kGpu);
  EXPECT_THROW(kernels::global_l2_norm({gx, hx}, gout), DeviceError);
  Tensor hout = Tensor::empty({1}, DType::f32);
  EXPECT_THROW(kernels::sum(gx, hout), DeviceError);
  EXPECT_THROW(kernels::sum_rows(gx.view({1, 5}), hx), DeviceError);
}

}  // namespace
}  // namespace zt
