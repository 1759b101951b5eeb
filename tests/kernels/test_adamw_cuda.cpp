// CUDA AdamW against the CPU kernel on the same inputs: 10-step f32 trajectories (odd sizes, every
// grad dtype, weight decay and bias correction on and off, grad_scale != 1), the scalar path for
// misaligned buffers, param_copy equal to the rounded params, and the low-precision mode one step
// at a time. Every test skips without a CUDA device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "support/test_util.h"
#include "zerotrain/kernels/adamw.h"

namespace zt {
namespace {

using kernels::adamw_step;
using kernels::AdamWParams;

const Device kGpu = Device::cuda(0);

double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v)
    m = std::max(m, std::fabs(x));
  return m;
}

struct Buffers {
  Tensor param, m, v, copy;
};

// f32 masters with f32 state and a bf16 copy; `offset` > 0 shifts every buffer off 16-byte
// alignment (views into slightly larger allocations).
Buffers make_f32_buffers(int64_t n, int64_t offset, uint64_t seed, Device dev) {
  auto place = [&](const Tensor& host) {
    Tensor big = Tensor::zeros({n + offset}, host.dtype(), dev);
    Tensor view = big.slice(0, offset, n + offset);
    view.copy_from(host);
    return view;
  };
  return {place(test::random_tensor({n}, DType::f32, seed)), place(Tensor::zeros({n}, DType::f32)),
          place(Tensor::zeros({n}, DType::f32)), place(Tensor::zeros({n}, DType::bf16))};
}

void run_f32_trajectory(int64_t n, int64_t offset, DType grad_dtype, float wd, bool bc,
                        uint64_t seed) {
  SCOPED_TRACE("n=" + std::to_string(n) + " offset=" + std::to_string(offset) + " grad " +
               std::string(dtype_name(grad_dtype)) + " wd=" + std::to_string(wd) +
               " bias_correction=" + std::to_string(bc));
  Buffers cpu = make_f32_buffers(n, offset, seed, Device::cpu());
  Buffers gpu = make_f32_buffers(n, offset, seed, kGpu);
  AdamWParams hp;
  hp.lr = 1e-2f;
  hp.eps = 1e-6f;
  hp.weight_decay = wd;
  hp.bias_correction = bc;
  hp.grad_scale = 0.5f;
  for (int64_t step = 1; step <= 10; ++step) {
    hp.step = step;
    Tensor grad = test::random_tensor({n}, grad_dtype, seed + 10 * step, -2.f, 2.f);
    Tensor grad_gpu = grad.to(kGpu);
    adamw_step(cpu.param, grad, cpu.m, cpu.v, hp, &cpu.copy);
    adamw_step(gpu.param, grad_gpu, gpu.m, gpu.v, hp, &gpu.copy);
  }
  const auto p = test::to_doubles(cpu.param);
  test::expect_close(p, gpu.param, {1e-6 * max_abs(p), 1e-6}, "param");
  test::expect_close(test::to_doubles(cpu.m), gpu.m, {1e-7 * hp.grad_scale * 2, 1e-6}, "m");
  test::expect_close(test::to_doubles(cpu.v), gpu.v, {1e-12, 1e-6}, "v");
  Tensor rounded = Tensor::from_floats(gpu.param.to_floats(), {n}, DType::bf16);
  test::expect_bitwise_equal(rounded, gpu.copy, "param_copy");
}

TEST(AdamWCuda, F32TrajectoryMatchesCpuOver10Steps) {
  ZT_SKIP_WITHOUT_CUDA();
  uint64_t seed = 5000;
  for (DType g : {DType::f32, DType::bf16, DType::f16})
    for (bool bc : {true, false})
      run_f32_trajectory(100003, 0, g, bc ? 0.1f : 0.f, bc, seed += 100);
  run_f32_trajectory(7, 0, DType::f32, 0.1f, true, seed += 100);  // scalar tail only
}

TEST(AdamWCuda, MisalignedBuffersTakeTheScalarPath) {
  ZT_SKIP_WITHOUT_CUDA();
  run_f32_trajectory(4099, 1, DType::bf16, 0.1f, true, 6000);
  run_f32_trajectory(4099, 3, DType::f32, 0.f, false, 6100);
}

TEST(AdamWCuda, LargeBufferMatchesCpu) {
  ZT_SKIP_WITHOUT_CUDA();
  run_f32_trajectory((int64_t{1} << 24) + 5, 0, DType::bf16, 0.1f, true, 6200);
}

// One step of the low-precision mode from identical states on both devices; results may differ
// by the final rounding only.
TEST(AdamWCuda, LowPrecisionModeMatchesCpuStepByStep) {
  ZT_SKIP_WITHOUT_CUDA();
  const int64_t n = 65543;
  uint64_t seed = 7000;
  for (DType pd : {DType::bf16, DType::f16}) {
    for (DType sd : {DType::f32, pd}) {
      SCOPED_TRACE(std::string("param ") + std::string(dtype_name(pd)) + " state " +
                   std::string(dtype_name(sd)));
      Tensor param = test::random_tensor({n}, pd, ++seed);
      Tensor m = Tensor::zeros({n}, sd), v = Tensor::zeros({n}, sd);
      Tensor copy = Tensor::empty({n}, DType::f16);
      AdamWParams hp;
      hp.lr = 3e-2f;
      hp.weight_decay = 0.1f;
      for (int64_t step = 1; step <= 5; ++step) {
        SCOPED_TRACE(step);
        hp.step = step;
        Tensor grad = test::random_tensor({n}, DType::bf16, ++seed, -2.f, 2.f);
        Tensor gp = param.to(kGpu), gm = m.to(kGpu), gv = v.to(kGpu);
        Tensor gcopy = Tensor::empty({n}, DType::f16, kGpu);
        adamw_step(gp, grad.to(kGpu), gm, gv, hp, &gcopy);
        adamw_step(param, grad, m, v, hp, &copy);
        const double u = pd == DType::bf16 ? 1.0 / 128 : 1.0 / 1024;  // one ulp, relative
        test::expect_close(test::to_doubles(param), gp, {6.2e-8, u}, "param");
        const double us = sd == DType::f32 ? 2e-6 : u;
        test::expect_close(test::to_doubles(m), gm, {6.2e-8 + 1e-7, us}, "m");
        test::expect_close(test::to_doubles(v), gv, {6.2e-8, us}, "v");
        Tensor rounded = Tensor::from_floats(gp.to_floats(), {n}, DType::f16);
        test::expect_bitwise_equal(rounded, gcopy, "param_copy");
        if (testing::Test::HasFailure()) return;
      }
    }
  }
}

}  // namespace
}  // namespace zt
