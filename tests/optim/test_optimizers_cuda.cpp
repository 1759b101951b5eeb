// The CUDA optimizers (fused multi-tensor launches) against the CPU scalar path: masters, states
// and copies bitwise equal after a few steps, for 40 runs (two launches) of mixed lengths, some
// starting off 16-byte alignment (the element-wise path), every grad dtype and copy dtype.
// Skips without a GPU.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "optim/optim_test_util.h"
#include "support/test_util.h"
#include "zerotrain/core/tensor.h"
#include "zerotrain/optim/optimizers.h"

namespace zt {
namespace {

using test::RunBuffers;

constexpr int kRuns = 40;

size_t run_size(int r) {
  return r == 3 ? 20000 : static_cast<size_t>(1 + (r * 97) % 300);
}

// One run's buffers on the GPU, each one element past a 16-byte boundary when `offset`.
struct DeviceRun {
  Tensor master, s0, s1, grad, copy;
  int64_t off = 0;
  int64_t n = 0;

  static Tensor upload(const std::vector<float>& v, DType dt, int64_t off) {
    std::vector<float> padded(static_cast<size_t>(off), 0.0f);
    padded.insert(padded.end(), v.begin(), v.end());
    return Tensor::from_floats(padded, {static_cast<int64_t>(padded.size())}, dt)
        .to(Device::cuda(0));
  }
  template <class T>
  T* at(const Tensor& t) const {
    return static_cast<T*>(t.data()) + off;
  }
  std::vector<float> download(const Tensor& t) const {
    const std::vector<double> d = test::to_doubles(t);
    return std::vector<float>(d.begin() + off, d.end());
  }
};

using Step = std::function<void(std::vector<RunBuffers>&, std::vector<DeviceRun>*, int step)>;

void compare(const Step& step_fn, DType gd, bool copy, DType cd) {
  std::vector<RunBuffers> host;
  std::vector<DeviceRun> dev;
  for (int r = 0; r < kRuns; ++r) {
    host.emplace_back(test::stream_values(11, 0, static_cast<uint64_t>(r), run_size(r)), gd, copy,
                      cd);
    DeviceRun d;
    d.off = r % 3 == 1 ? 1 : 0;
    d.n = host.back().n();
    d.master = DeviceRun::upload(host.back().master, DType::f32, d.off);
    d.s0 = DeviceRun::upload(host.back().s0, DType::f32, d.off);
    d.s1 = DeviceRun::upload(host.back().s1, DType::f32, d.off);
    d.copy = DeviceRun::upload(std::vector<float>(run_size(r), 0.0f), cd, d.off);
    dev.push_back(d);
  }
  for (int step = 1; step <= 3; ++step) {
    for (int r = 0; r < kRuns; ++r) {
      const auto g = test::stream_values(12, static_cast<uint64_t>(step), static_cast<uint64_t>(r),
                                         run_size(r));
      host[r].set_grad(g);
      dev[r].grad = DeviceRun::upload(g, gd, dev[r].off);
    }
    step_fn(host, nullptr, step);
    step_fn(host, &dev, step);
  }
  for (int r = 0; r < kRuns; ++r) {
    const std::string what = str("run ", r, " grad ", dtype_name(gd), " copy ", copy);
    EXPECT_EQ(dev[r].download(dev[r].master), host[r].master) << what;
    EXPECT_EQ(dev[r].download(dev[r].s0), host[r].s0) << what;
    EXPECT_EQ(dev[r].download(dev[r].s1), host[r].s1) << what;
    if (copy) {
      std::vector<float> want(host[r].copy.size());
      for (size_t i = 0; i < want.size(); ++i)
        want[i] =
            cd == DType::bf16 ? bf16::to_float(host[r].copy[i]) : f16::to_float(host[r].copy[i]);
      EXPECT_EQ(dev[r].download(dev[r].copy), want) << what << " copy";
    }
  }
}

void for_all_dtypes(const Step& fn) {
  for (DType gd : {DType::f32, DType::bf16, DType::f16})
    for (int copy = 0; copy < 3; ++copy)
      compare(fn, gd, copy > 0, copy == 2 ? DType::f16 : DType::bf16);
}

// The Adam shard of host run `h` re-pointed at the device buffers of `d`.
optim::AdamShard device_adam(RunBuffers& h, const DeviceRun& d, float wd) {
  optim::AdamShard s = h.adam(wd);
  s.master = d.at<float>(d.master);
  s.exp_avg = d.at<float>(d.s0);
  s.exp_avg_sq = d.at<float>(d.s1);
  s.grad = static_cast<const char*>(d.grad.data()) +
           d.off * static_cast<int64_t>(dtype_size(d.grad.dtype()));
  s.param_copy = s.param_copy ? static_cast<void*>(d.at<uint16_t>(d.copy)) : nullptr;
  return s;
}

TEST(OptimCuda, AdamWMatchesCpu) {
  ZT_SKIP_WITHOUT_CUDA();
  for_all_dtypes([](std::vector<RunBuffers>& h, std::vector<DeviceRun>* d, int step) {
    std::vector<optim::AdamShard> s;
    for (int r = 0; r < kRuns; ++r)
      s.push_back(d ? device_adam(h[r], (*d)[r], r % 2 ? 0.0f : 0.1f)
                    : h[r].adam(r % 2 ? 0.0f : 0.1f));
    optim::StepArgs a{step, 0.5f, optim::CpuIsa::scalar};
    optim::adam_step(s, optim::AdamParams{}, a, d ? Device::cuda(0) : Device::cpu());
    if (d) synchronize(Stream{Device::cuda(0)});
  });
}

TEST(OptimCuda, LionMatchesCpu) {
  ZT_SKIP_WITHOUT_CUDA();
  for_all_dtypes([](std::vector<RunBuffers>& h, std::vector<DeviceRun>* d, int step) {
    std::vector<optim::LionShard> s;
    for (int r = 0; r < kRuns; ++r) {
      const optim::AdamShard a = d ? device_adam(h[r], (*d)[r], 0.1f) : h[r].adam(0.1f);
      s.push_back({a.master, a.exp_avg, a.grad, a.grad_dtype, a.param_copy, a.param_dtype, a.n,
                   a.weight_decay});
    }
    optim::StepArgs a{step, 1.0f, optim::CpuIsa::scalar};
    optim::lion_step(s, optim::LionParams{}, a, d ? Device::cuda(0) : Device::cpu());
    if (d) synchronize(Stream{Device::cuda(0)});
  });
}

TEST(OptimCuda, SgdNesterovMatchesCpu) {
  ZT_SKIP_WITHOUT_CUDA();
  for_all_dtypes([](std::vector<RunBuffers>& h, std::vector<DeviceRun>* d, int step) {
    std::vector<optim::SgdShard> s;
    for (int r = 0; r < kRuns; ++r) {
      const optim::AdamShard a = d ? device_adam(h[r], (*d)[r], 0.01f) : h[r].adam(0.01f);
      s.push_back({a.master, a.exp_avg, a.grad, a.grad_dtype, a.param_copy, a.param_dtype, a.n,
                   a.weight_decay});
    }
    optim::SgdParams hp;
    hp.momentum = 0.9f;
    hp.nesterov = true;
    optim::StepArgs a{step, 1.0f, optim::CpuIsa::scalar};
    optim::sgd_step(s, hp, a, d ? Device::cuda(0) : Device::cpu());
    if (d) synchronize(Stream{Device::cuda(0)});
  });
}

}  // namespace
}  // namespace zt
