// The training building blocks on a GPU, against the same code on the CPU: the flat Adam
// (optim/param_adam.h) with bf16 values and f32 masters (state on the parameters' device, value ==
// round(master) there too), a state saved on the host loaded into a GPU optimizer, the global
// gradient norm, and the CUDA allocator's memory snapshot. Every test skips without a CUDA device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "optim/param_adam.h"
#include "support/test_util.h"
#include "train/param_fixture.h"
#include "zerotrain/kernels/cast.h"
#include "zerotrain/train/grad_clip.h"
#include "zerotrain/train/step_measures.h"

namespace zt {
namespace {

using nn::Parameter;
using nn::ParamKind;

const Device kGpu = Device::cuda(0);

// The same parameters on `device`: a bf16 weight, an f32 norm, a bf16 embedding.
std::vector<std::unique_ptr<Parameter>> make_params(Device device) {
  const test::ParamSpec specs[] = {{"w", {33, 65}, ParamKind::weight, DType::bf16},
                                   {"norm", {65}, ParamKind::norm, DType::f32},
                                   {"emb", {17, 9}, ParamKind::embedding, DType::bf16}};
  return test::make_params(specs, 70, device);
}

using test::pointers;

void set_grads(std::vector<std::unique_ptr<Parameter>>& ps, uint64_t seed, Device device) {
  for (auto& p : ps)
    p->grad = test::random_tensor(p->shape, DType::f32, ++seed, -2.f, 2.f, device);
}

double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v)
    m = std::max(m, std::fabs(x));
  return m;
}

TEST(TrainCuda, AdamWWithMastersMatchesTheCpu) {
  ZT_SKIP_WITHOUT_CUDA();
  auto cpu = make_params(Device::cpu()), gpu = make_params(kGpu);
  test::ParamAdamOptions o;
  o.adam.weight_decay = 0.1f;
  test::ParamAdam opt_cpu(pointers(cpu), o), opt_gpu(pointers(gpu), o);
  for (int s = 0; s < 5; ++s) {
    set_grads(cpu, 300 + 10 * s, Device::cpu());
    set_grads(gpu, 300 + 10 * s, kGpu);
    const train::ClipResult c_cpu = train::clip_grad_norm(pointers(cpu), 1.0);
    const train::ClipResult c_gpu = train::clip_grad_norm(pointers(gpu), 1.0);
    EXPECT_NEAR(c_gpu.norm, c_cpu.norm, 1e-6 * c_cpu.norm);
    opt_cpu.step(1e-2f, c_cpu.grad_scale);
    opt_gpu.step(1e-2f, c_cpu.grad_scale);  // the same scale: compare the optimizers alone
  }
  const optim::OptimizerState s_cpu = opt_cpu.state(), s_gpu = opt_gpu.state();
  ASSERT_EQ(s_cpu.tensors.size(), s_gpu.tensors.size());
  for (const auto& [name, t] : s_cpu.tensors) {
    SCOPED_TRACE(name);
    const Tensor& g = s_gpu.tensors.at(name);
    EXPECT_TRUE(g.device() == kGpu);
    const std::vector<double> want = test::to_doubles(t);
    test::expect_close(want, g, {1e-6 * max_abs(want) + 1e-12, 1e-5}, name);
  }
  for (const auto& p : gpu) {
    SCOPED_TRACE(p->name);
    ASSERT_TRUE(p->value.device() == kGpu);
    if (p->value.dtype() != DType::f32)
      test::expect_bitwise_equal(
          kernels::cast_to(s_gpu.tensors.at(p->name + ".master"), DType::bf16), p->value,
          "value == round(master)");
  }
}

TEST(TrainCuda, HostStateLoadsIntoAGpuOptimizer) {
  ZT_SKIP_WITHOUT_CUDA();
  auto cpu = make_params(Device::cpu()), gpu = make_params(kGpu);
  test::ParamAdam opt_cpu(pointers(cpu)), opt_gpu(pointers(gpu));
  set_grads(cpu, 900, Device::cpu());
  opt_cpu.step(1e-2f);
  opt_gpu.load_state(opt_cpu.state());  // host tensors copied onto the GPU
  EXPECT_EQ(opt_gpu.step_count(), 1);
  for (const auto& [name, t] : opt_gpu.state().tensors) {
    EXPECT_TRUE(t.device() == kGpu) << name;
    test::expect_close(test::to_doubles(opt_cpu.state().tensors.at(name)), t, {0, 0}, name);
  }
  // Masters were cast into the GPU values.
  test::expect_close(test::to_doubles(cpu[0]->value), gpu[0]->value, {0, 0}, "w");
}

TEST(TrainCuda, MemorySnapshotAndPeakOfTheGpu) {
  ZT_SKIP_WITHOUT_CUDA();
  const train::MemorySnapshot before = train::memory_snapshot(kGpu);
  Tensor big = Tensor::empty({64 * 1024 * 1024}, DType::f32, kGpu);  // 256 MiB
  const train::MemorySnapshot during = train::memory_snapshot(kGpu);
  EXPECT_GE(during.allocated_gib - before.allocated_gib, 0.25 - 1e-9);
  EXPECT_GE(during.reserved_gib, during.allocated_gib);
  EXPECT_GE(during.peak_allocated_gib, during.allocated_gib);
  EXPECT_GT(train::peak_flops_of(kGpu), 0.0) << cuda_device_name(0) << " has no known peak";
}

}  // namespace
}  // namespace zt
