// The CUDA low-precision Adam (optim/cuda/optimizers_lowp.cu) against the CPU scalar path: bf16
// values and moments bitwise equal after three steps, for 40 runs (two launches) of mixed lengths,
// every grad dtype, AdamW and Adam. Skips without a GPU.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "optim/lowp_test_util.h"
#include "support/test_util.h"
#include "zerotrain/core/tensor.h"
#include "zerotrain/optim/low_precision.h"

namespace zt {
namespace {

constexpr int kRuns = 40;

size_t run_size(int r) {
  return r == 3 ? 20000 : static_cast<size_t>(1 + (r * 97) % 300);
}

std::vector<float> widen(const std::vector<bf16>& x) {
  std::vector<float> out;
  for (const bf16& b : x)
    out.push_back(bf16::to_float(b.bits));
  return out;
}

Tensor upload(const std::vector<float>& v, DType dt) {
  return Tensor::from_floats(v, {static_cast<int64_t>(v.size())}, dt).to(Device::cuda(0));
}

void compare(DType gd, bool decoupled) {
  std::vector<test::LowpBuffers> host;
  std::vector<Tensor> p, m, v;
  for (int r = 0; r < kRuns; ++r) {
    host.emplace_back(test::stream_values(31, 0, static_cast<uint64_t>(r), run_size(r)), gd);
    p.push_back(upload(widen(host.back().p), DType::bf16));
    m.push_back(upload(widen(host.back().m), DType::bf16));
    v.push_back(upload(widen(host.back().v), DType::bf16));
  }
  optim::AdamParams hp;
  hp.lr = 1e-2f;
  hp.decoupled = decoupled;
  for (int step = 1; step <= 3; ++step) {
    std::vector<Tensor> grads;
    std::vector<optim::AdamSegmentLowp> cpu, gpu;
    for (int r = 0; r < kRuns; ++r) {
      const auto g = test::stream_values(32, static_cast<uint64_t>(step), static_cast<uint64_t>(r),
                                         run_size(r));
      host[r].set_grad(g);
      grads.push_back(upload(g, gd));
      const float wd = r % 2 ? 0.0f : 0.1f;
      cpu.push_back(host[r].shard(wd));
      gpu.push_back({static_cast<bf16*>(p[r].data()), static_cast<bf16*>(m[r].data()),
                     static_cast<bf16*>(v[r].data()), grads.back().data(), gd, host[r].n(), wd});
    }
    const optim::StepArgs args{step, 0.5f, optim::CpuIsa::scalar};
    optim::adam_step_lowp(cpu, hp, args);
    optim::adam_step_lowp(gpu, hp, args, Device::cuda(0));
    synchronize(Stream{Device::cuda(0)});
  }
  for (int r = 0; r < kRuns; ++r) {
    const std::string what = str("run ", r, " grad ", dtype_name(gd), " decoupled ", decoupled);
    EXPECT_EQ(p[r].to_floats(), widen(host[r].p)) << what;
    EXPECT_EQ(m[r].to_floats(), widen(host[r].m)) << what;
    EXPECT_EQ(v[r].to_floats(), widen(host[r].v)) << what;
  }
}

TEST(OptimCuda, LowPrecisionAdamMatchesCpu) {
  ZT_SKIP_WITHOUT_CUDA();
  for (DType gd : {DType::f32, DType::bf16, DType::f16})
    for (bool decoupled : {true, false})
      compare(gd, decoupled);
}

}  // namespace
}  // namespace zt
