// CUDA elementwise kernels against the CPU backend on the same inputs: every op for f32/f16/bf16 at
// odd sizes and at 4096 x 14336 (an MLP activation of a 8B model), views whose data is not 16-byte
// aligned (the element-by-element path), in-place aliasing, a side stream, and device errors.
// f32 agrees to ~1e-6 relative; f16/bf16 to one ulp of the dtype (plus 1e-6 absolute, for results
// near a zero crossing where two f32 evaluations differ by ~1e-7).
// Run (GPU): zerotrain_tests --gtest_filter='ElementwiseCuda.*'
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kernels/elementwise_cases.h"
#include "kernels/ulp.h"
#include "support/test_util.h"
#include "zerotrain/core/stream.h"
#include "zerotrain/kernels/elementwise.h"

namespace zt {
namespace {

using test::ElementwiseCase;

constexpr DType kDTypes[] = {DType::f32, DType::f16, DType::bf16};
const Device kGpu = Device::cuda(0);

// got (CUDA) against want (CPU), element by element.
void expect_matches_cpu(const Tensor& want, const Tensor& got, const std::string& what) {
  ASSERT_EQ(want.shape(), got.shape()) << what;
  const std::vector<float> w = want.to_floats(), g = got.to_floats();
  size_t bad = 0, worst = 0;
  for (size_t i = 0; i < w.size(); ++i) {
    const double a = w[i], b = g[i], mag = std::max(std::fabs(a), std::fabs(b));
    const double allowed =
        want.dtype() == DType::f32 ? 2e-6 * mag + 1e-6 : test::ulp_of(want.dtype(), mag) + 1e-6;
    if (!(std::fabs(a - b) <= allowed) && !(std::isnan(a) && std::isnan(b))) {
      if (bad++ == 0) worst = i;
    }
  }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << w.size() << " elements differ; first at "
                     << worst << ": cuda " << (bad ? g[worst] : 0.f) << ", cpu "
                     << (bad ? w[worst] : 0.f);
}

std::vector<Tensor> random_inputs(const ElementwiseCase& c, const Shape& shape, DType dtype,
                                  uint64_t seed) {
  std::vector<Tensor> in;
  for (int k = 0; k < c.n_in; ++k)
    in.push_back(test::random_tensor(shape, dtype, seed + 101 * k, c.lo, c.hi));
  return in;
}

// Outputs on `device` filled with NaN, so an element the kernel misses fails the comparison.
std::vector<Tensor> poisoned(int n, const Shape& shape, DType dtype, Device device) {
  std::vector<Tensor> out;
  for (int k = 0; k < n; ++k) {
    out.push_back(Tensor::empty(shape, dtype, device));
    out.back().fill(std::numeric_limits<double>::quiet_NaN());
  }
  return out;
}

std::vector<Tensor> to_gpu(const std::vector<Tensor>& ts) {
  std::vector<Tensor> r;
  for (const Tensor& t : ts)
    r.push_back(t.to(kGpu));
  return r;
}

// Runs case c on the CPU and on the GPU from the same host inputs and compares the outputs.
void check_case(const ElementwiseCase& c, const std::vector<Tensor>& in, const std::string& what) {
  const Shape& shape = in[0].shape();
  const DType dtype = in[0].dtype();
  std::vector<Tensor> want = poisoned(c.n_out, shape, dtype, Device::cpu());
  c.run(in, want, {});
  std::vector<Tensor> got = poisoned(c.n_out, shape, dtype, kGpu);
  c.run(to_gpu(in), got, {});
  for (int k = 0; k < c.n_out; ++k)
    expect_matches_cpu(want[k], got[k], str(what, " out", k));
}

TEST(ElementwiseCuda, MatchesCpu) {
  ZT_SKIP_WITHOUT_CUDA();
  const Shape shapes[] = {{1}, {7}, {1003}, {65537}, {513, 4099}};
  for (const ElementwiseCase& c : test::elementwise_cases())
    for (DType dtype : kDTypes)
      for (const Shape& shape : shapes)
        check_case(c, random_inputs(c, shape, dtype, 211),
                   str(c.name, " ", dtype_name(dtype), to_string(shape)));
}

TEST(ElementwiseCuda, MatchesCpuAtMlpSize) {
  ZT_SKIP_WITHOUT_CUDA();
  const Shape shape = {4096, 14336};
  for (const ElementwiseCase& c : test::elementwise_cases())
    check_case(c, random_inputs(c, shape, DType::bf16, 223),
               str(c.name, " bf16", to_string(shape)));
}

// A contiguous view starting one element into a buffer: never 16-byte aligned.
Tensor misaligned(const Tensor& t) {
  Tensor buf = Tensor::empty({t.numel() + 1}, t.dtype(), t.device());
  Tensor view = buf.slice(0, 1, t.numel() + 1).view(t.shape());
  view.copy_from(t);
  return view;
}

TEST(ElementwiseCuda, MisalignedViewsMatchCpu) {
  ZT_SKIP_WITHOUT_CUDA();
  for (const ElementwiseCase& c : test::elementwise_cases())
    for (DType dtype : kDTypes)
      for (int64_t n : {7, 1003, 65537}) {
        const std::string what = str(c.name, " ", dtype_name(dtype), "[", n, "]");
        const std::vector<Tensor> in = random_inputs(c, {n}, dtype, 227);
        std::vector<Tensor> want = poisoned(c.n_out, {n}, dtype, Device::cpu());
        c.run(in, want, {});
        // Every tensor misaligned, then only the outputs, then only the first input.
        for (int variant = 0; variant < 3; ++variant) {
          std::vector<Tensor> gin = to_gpu(in);
          std::vector<Tensor> gout = poisoned(c.n_out, {n}, dtype, kGpu);
          if (variant != 1) gin[0] = misaligned(gin[0]);
          if (variant == 0)
            for (size_t k = 1; k < gin.size(); ++k)
              gin[k] = misaligned(gin[k]);
          if (variant != 2)
            for (Tensor& t : gout)
              t = misaligned(t);
          ASSERT_NE(reinterpret_cast<uintptr_t>(variant == 1 ? gout[0].data() : gin[0].data()) % 16,
                    0u);
          c.run(gin, gout, {});
          for (int k = 0; k < c.n_out; ++k)
            expect_matches_cpu(want[k], gout[k], str(what, " variant ", variant, " out", k));
        }
      }
}

TEST(ElementwiseCuda, InPlaceMatchesOutOfPlace) {
  ZT_SKIP_WITHOUT_CUDA();
  for (const ElementwiseCase& c : test::elementwise_cases())
    for (DType dtype : kDTypes)
      for (int64_t n : {1003, 1 << 20}) {
        const std::vector<Tensor> in = to_gpu(random_inputs(c, {n}, dtype, 229));
        std::vector<Tensor> want = poisoned(c.n_out, {n}, dtype, kGpu);
        c.run(in, want, {});
        for (int j = 0; j < c.n_in; ++j) {  // output k over input (j + k) % n_in
          std::vector<Tensor> work;
          for (const Tensor& t : in)
            work.push_back(t.clone());
          std::vector<Tensor> out;
          for (int k = 0; k < c.n_out; ++k)
            out.push_back(work[(j + k) % c.n_in]);
          c.run(work, out, {});
          for (int k = 0; k < c.n_out; ++k)
            test::expect_bitwise_equal(want[k], out[k],
                                       str(c.name, " ", dtype_name(dtype), "[", n, "] out", k,
                                           " over in", (j + k) % c.n_in));
        }
      }
}

TEST(ElementwiseCuda, RunsOnTheGivenStream) {
  ZT_SKIP_WITHOUT_CUDA();
  CudaStream side(kGpu);
  for (const ElementwiseCase& c : test::elementwise_cases()) {
    const std::vector<Tensor> in = to_gpu(random_inputs(c, {1 << 20}, DType::bf16, 233));
    std::vector<Tensor> want = poisoned(c.n_out, {1 << 20}, DType::bf16, kGpu);
    c.run(in, want, {});
    std::vector<Tensor> got;
    for (int k = 0; k < c.n_out; ++k) {
      got.push_back(Tensor::empty({1 << 20}, DType::bf16, kGpu, side));
      got.back().fill(std::numeric_limits<double>::quiet_NaN(), side);
    }
    synchronize_device(kGpu);  // inputs and `want` are ready before the side stream reads them
    c.run(in, got, side);
    synchronize(side);
    for (int k = 0; k < c.n_out; ++k)
      test::expect_bitwise_equal(want[k], got[k], str(c.name, " on a side stream out", k));
  }
}

TEST(ElementwiseCuda, MixedDevicesThrow) {
  ZT_SKIP_WITHOUT_CUDA();
  Tensor a = test::random_tensor({5}, DType::f32, 1, -1.f, 1.f, kGpu);
  Tensor b = test::random_tensor({5}, DType::f32, 2);
  Tensor out = Tensor::empty({5}, DType::f32, kGpu);
  try {
    kernels::add(a, b, out);
    ADD_FAILURE() << "expected DeviceError";
  } catch (const DeviceError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("[add]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("f32[5] on cuda:0"), std::string::npos) << msg;
    EXPECT_NE(msg.find("f32[5] on cpu"), std::string::npos) << msg;
  }
  Tensor host_out = Tensor::empty({5}, DType::f32);
  EXPECT_THROW(kernels::gelu_tanh_forward(a, host_out), DeviceError);
}

}  // namespace
}  // namespace zt
