// CUDA causal grouped-query attention against the CPU kernel on the same inputs: every supported
// head dim, odd and real sequence lengths, GQA 8/2 and 32/8, window on and off, f16/bf16 (tensor
// cores) and f32; bitwise run-to-run equality; a LLaMA-8B-sized case (S=4096, 32/8 heads, D=128)
// checked on sampled rows through the CPU row kernels; head-dim rejection; a non-default stream.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "kernels/reference_attention.h"
#include "support/test_util.h"
#include "zerotrain/core/stream.h"
#include "zerotrain/kernels/attention.h"
#include "zerotrain/kernels/cpu/attention.h"

namespace zt {
namespace {

using kernels::AttentionOptions;

struct Results {
  Tensor out, lse, dq, dk, dv;  // on the host
};

// Forward then backward on `dev`; results copied back to the host.
Results run_on(const test::AttentionInputs& p, Device dev, const AttentionOptions& opt,
               Stream stream = {}) {
  const DType dt = p.q.dtype();
  const auto& s = p.shape;
  Tensor q = p.q.to(dev, stream), k = p.k.to(dev, stream), v = p.v.to(dev, stream),
         dout = p.dout.to(dev, stream);
  Tensor out = Tensor::empty(q.shape(), dt, dev, stream);
  Tensor lse = Tensor::empty({s.B, s.Hq, s.S}, DType::f32, dev, stream);
  kernels::attention_forward(q, k, v, out, lse, opt, stream);
  Tensor dq = Tensor::empty(q.shape(), dt, dev, stream),
         dk = Tensor::empty(k.shape(), dt, dev, stream),
         dv = Tensor::empty(v.shape(), dt, dev, stream);
  kernels::attention_backward(q, k, v, out, lse, dout, dq, dk, dv, opt, stream);
  synchronize(stream);
  return {out.to(Device::cpu()), lse.to(Device::cpu()), dq.to(Device::cpu()), dk.to(Device::cpu()),
          dv.to(Device::cpu())};
}

double max_abs(const std::vector<double>& x) {
  double m = 0;
  for (double v : x)
    m = std::max(m, std::fabs(v));
  return m;
}

// Half types: within 2% of the output's scale (P and dS are rounded to 16 bits before the second
// product of each pair). f32: within a few f32 roundings of a long sum. The scale is at least 0.1,
// the size of the terms that cancel in gradients that are exactly zero (S = 1: dq = dk = 0).
void expect_close_scaled(const Tensor& ref, const Tensor& got, DType dt, const std::string& what) {
  const std::vector<double> r = test::to_doubles(ref);
  const double rel = dt == DType::f32 ? 2e-5 : 2e-2;
  test::expect_close(r, got, {rel * std::max(max_abs(r), 0.1), rel}, what);
}

constexpr test::Tolerance kLseTolerance{2e-4, 1e-4};

void compare_with_cpu(int64_t B, int64_t S, int64_t Hq, int64_t Hkv, int64_t D, int64_t window,
                      DType dt, uint64_t seed) {
  const auto p = test::attention_inputs(B, S, Hq, Hkv, D, window, dt, seed);
  const AttentionOptions opt{0.0f, window, {}};
  const Results gpu = run_on(p, Device::cuda(0), opt), cpu = run_on(p, Device::cpu(), opt);
  const std::string what =
      str(dtype_name(dt), " B=", B, " S=", S, " H=", Hq, "/", Hkv, " D=", D, " window=", window);
  expect_close_scaled(cpu.out, gpu.out, dt, what + " out");
  test::expect_close(test::to_doubles(cpu.lse), gpu.lse, kLseTolerance, what + " lse");
  expect_close_scaled(cpu.dq, gpu.dq, dt, what + " dq");
  expect_close_scaled(cpu.dk, gpu.dk, dt, what + " dk");
  expect_close_scaled(cpu.dv, gpu.dv, dt, what + " dv");
}

class AttentionCuda : public ::testing::TestWithParam<DType> {};

TEST_P(AttentionCuda, MatchesCpuAcrossHeadDimsAndLengths) {
  ZT_SKIP_WITHOUT_CUDA();
  uint64_t seed = 1000;
  for (int64_t D : {32, 64, 80, 96, 128})
    for (int64_t S : {1, 33, 127, 256, 1000})
      for (int64_t window : {int64_t{0}, std::max<int64_t>(1, S / 5)})
        compare_with_cpu(S == 1000 ? 1 : 2, S, 8, 2, D, window, GetParam(), seed += 7);
}

TEST_P(AttentionCuda, MatchesCpuWithLlamaHeadGroups) {
  ZT_SKIP_WITHOUT_CUDA();
  uint64_t seed = 5000;
  for (int64_t D : {64, 128})
    for (int64_t S : {127, 1000})
      for (int64_t window : {0, 300})
        compare_with_cpu(1, S, 32, 8, D, window, GetParam(), seed += 7);
}

INSTANTIATE_TEST_SUITE_P(Attention, AttentionCuda,
                         ::testing::Values(DType::f32, DType::f16, DType::bf16),
                         [](const ::testing::TestParamInfo<DType>& p) {
                           return std::string(dtype_name(p.param));
                         });

TEST(AttentionCudaDeterminism, RepeatedRunsAreBitwiseEqual) {
  ZT_SKIP_WITHOUT_CUDA();
  for (DType dt : {DType::bf16, DType::f32}) {
    const auto p = test::attention_inputs(2, 777, 32, 8, 128, 0, dt, 42);
    const Results a = run_on(p, Device::cuda(0), {}), b = run_on(p, Device::cuda(0), {});
    const std::string n(dtype_name(dt));
    test::expect_bitwise_equal(a.out, b.out, n + " out");
    test::expect_bitwise_equal(a.lse, b.lse, n + " lse");
    test::expect_bitwise_equal(a.dq, b.dq, n + " dq");
    test::expect_bitwise_equal(a.dk, b.dk, n + " dk");
    test::expect_bitwise_equal(a.dv, b.dv, n + " dv");
  }
}

// Rows `rows` of a [B, S, H, D] tensor as [B, R, H, D] (host).
Tensor gather_rows(const Tensor& t, const std::vector<int64_t>& rows) {
  const int64_t B = t.size(0), H = t.size(2), D = t.size(3);
  const auto R = static_cast<int64_t>(rows.size());
  Tensor r = Tensor::empty({B, R, H, D}, t.dtype());
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < R; ++i)
      r.select(0, b).select(0, i).copy_from(t.select(0, b).select(0, rows[i]));
  return r;
}

// lse [B, H, S] at positions `rows` as [B, H, R].
Tensor gather_lse(const Tensor& t, const std::vector<int64_t>& rows) {
  const int64_t B = t.size(0), H = t.size(1);
  const auto R = static_cast<int64_t>(rows.size());
  Tensor r = Tensor::empty({B, H, R}, DType::f32);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < R; ++i)
        r.select(0, b)
            .select(0, h)
            .slice(0, i, i + 1)
            .copy_from(t.select(0, b).select(0, h).slice(0, rows[i], rows[i] + 1));
  return r;
}

TEST(AttentionCudaLarge, Llama8bShapeOnSampledRows) {
  ZT_SKIP_WITHOUT_CUDA();
  const int64_t S = 4096, Hq = 32, Hkv = 8, D = 128;
  const std::vector<int64_t> rows = {0, 1, 63, 64, 127, 128, 1000, 2047, 2048, 3001, 4094, 4095};
  const auto R = static_cast<int64_t>(rows.size());
  for (int64_t window : {0, 1024}) {
    const auto p = test::attention_inputs(1, S, Hq, Hkv, D, window, DType::bf16, 77 + window);
    const AttentionOptions opt{0.0f, window, {}};
    const Results gpu = run_on(p, Device::cuda(0), opt);
    const std::string what = str("S=4096 32/8 D=128 bf16 window=", window);

    Tensor out_r = Tensor::empty({1, R, Hq, D}, DType::bf16),
           lse_r = Tensor::empty({1, Hq, R}, DType::f32);
    kernels::cpu::attention_forward_rows(p.q, p.k, p.v, rows, out_r, lse_r, opt);
    expect_close_scaled(out_r, gather_rows(gpu.out, rows), DType::bf16, what + " out");
    test::expect_close(test::to_doubles(lse_r), gather_lse(gpu.lse, rows), kLseTolerance,
                       what + " lse");

    // The backward rows take the GPU's out and lse (checked above on the sample) as saved state.
    Tensor dq_r = Tensor::empty({1, R, Hq, D}, DType::bf16);
    Tensor dk_r = Tensor::empty({1, R, Hkv, D}, DType::bf16),
           dv_r = Tensor::empty({1, R, Hkv, D}, DType::bf16);
    kernels::cpu::attention_backward_rows(p.q, p.k, p.v, gpu.out, gpu.lse, p.dout, rows, dq_r, rows,
                                          dk_r, dv_r, opt);
    expect_close_scaled(dq_r, gather_rows(gpu.dq, rows), DType::bf16, what + " dq");
    expect_close_scaled(dk_r, gather_rows(gpu.dk, rows), DType::bf16, what + " dk");
    expect_close_scaled(dv_r, gather_rows(gpu.dv, rows), DType::bf16, what + " dv");
  }
}

TEST(AttentionCudaErrors, UnsupportedHeadDimNamesD) {
  ZT_SKIP_WITHOUT_CUDA();
  const Device dev = Device::cuda(0);
  Tensor q = Tensor::zeros({1, 8, 4, 48}, DType::bf16, dev),
         k = Tensor::zeros({1, 8, 2, 48}, DType::bf16, dev);
  Tensor out = Tensor::zeros({1, 8, 4, 48}, DType::bf16, dev),
         lse = Tensor::zeros({1, 4, 8}, DType::f32, dev);
  try {
    kernels::attention_forward(q, k, k, out, lse);
    ADD_FAILURE() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("D=48"), std::string::npos) << e.what();
  }
  Tensor lse_cpu = Tensor::zeros({1, 4, 8}, DType::f32);
  EXPECT_THROW(kernels::attention_forward(q, k, k, out, lse_cpu), DeviceError);
}

TEST(AttentionCudaStream, NonDefaultStreamMatchesDefault) {
  ZT_SKIP_WITHOUT_CUDA();
  const auto p = test::attention_inputs(2, 300, 8, 2, 64, 50, DType::f16, 9);
  CudaStream stream(Device::cuda(0));
  const Results a = run_on(p, Device::cuda(0), {0.0f, 50, {}}),
                b = run_on(p, Device::cuda(0), {0.0f, 50, {}}, stream);
  test::expect_bitwise_equal(a.out, b.out, "out");
  test::expect_bitwise_equal(a.dq, b.dq, "dq");
  test::expect_bitwise_equal(a.dk, b.dk, "dk");
  test::expect_bitwise_equal(a.dv, b.dv, "dv");
}

}  // namespace
}  // namespace zt
