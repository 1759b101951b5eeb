// The CUDA optimizers (fused multi-tensor launches) against the CPU scalar path (Adam also with
// amsgrad, SGD with a leading empty run): masters, states
// and copies bitwise equal after a few steps, for 40 runs (two launches) of mixed lengths, some
// starting off 16-byte alignment (the element-wise path), every grad dtype and copy dtype.
// LAMB: bitwise equal with the trust ratio clamped to 1; with a free trust ratio the params
// within a bound derived from the norms' summation order (see LambTrustRatioMatchesCpu).
// Skips without a GPU.
#include <gtest/gtest.h>

#include <cmath>
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
  Tensor master, s0, s1, s2, grad, copy;
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
    d.s2 = DeviceRun::upload(host.back().s2, DType::f32, d.off);
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
    EXPECT_EQ(dev[r].download(dev[r].s2), host[r].s2) << what;
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
optim::AdamSegment device_adam(RunBuffers& h, const DeviceRun& d, float wd, bool amsgrad = false) {
  optim::AdamSegment s = h.adam(wd);
  s.master = d.at<float>(d.master);
  s.exp_avg = d.at<float>(d.s0);
  s.exp_avg_sq = d.at<float>(d.s1);
  s.max_exp_avg_sq = amsgrad ? d.at<float>(d.s2) : nullptr;
  s.grad = static_cast<const char*>(d.grad.data()) +
           d.off * static_cast<int64_t>(dtype_size(d.grad.dtype()));
  s.param_copy = s.param_copy ? static_cast<void*>(d.at<uint16_t>(d.copy)) : nullptr;
  return s;
}

TEST(OptimCuda, AdamWMatchesCpu) {
  ZT_SKIP_WITHOUT_CUDA();
  for_all_dtypes([](std::vector<RunBuffers>& h, std::vector<DeviceRun>* d, int step) {
    std::vector<optim::AdamSegment> s;
    for (int r = 0; r < kRuns; ++r)
      s.push_back(d ? device_adam(h[r], (*d)[r], r % 2 ? 0.0f : 0.1f)
                    : h[r].adam(r % 2 ? 0.0f : 0.1f));
    optim::StepArgs a{step, 0.5f, optim::CpuIsa::scalar};
    optim::adam_step(s, optim::AdamParams{}, a, d ? Device::cuda(0) : Device::cpu());
    if (d) synchronize(Stream{Device::cuda(0)});
  });
}

// Adam's L2 term in the gradient and no bias correction: the other branches of the constants.
TEST(OptimCuda, AdamL2WithoutBiasCorrectionMatchesCpu) {
  ZT_SKIP_WITHOUT_CUDA();
  for_all_dtypes([](std::vector<RunBuffers>& h, std::vector<DeviceRun>* d, int step) {
    std::vector<optim::AdamSegment> s;
    for (int r = 0; r < kRuns; ++r)
      s.push_back(d ? device_adam(h[r], (*d)[r], r % 2 ? 0.0f : 0.1f)
                    : h[r].adam(r % 2 ? 0.0f : 0.1f));
    optim::AdamParams hp;
    hp.decoupled = false;
    hp.bias_correction = false;
    hp.eps = 1e-3f;
    optim::StepArgs a{step, 2.0f, optim::CpuIsa::scalar};
    optim::adam_step(s, hp, a, d ? Device::cuda(0) : Device::cpu());
    if (d) synchronize(Stream{Device::cuda(0)});
  });
}

TEST(OptimCuda, AdamAmsgradMatchesCpu) {
  ZT_SKIP_WITHOUT_CUDA();
  for_all_dtypes([](std::vector<RunBuffers>& h, std::vector<DeviceRun>* d, int step) {
    std::vector<optim::AdamSegment> s;
    for (int r = 0; r < kRuns; ++r) {
      const float wd = r % 2 ? 0.0f : 0.1f;
      s.push_back(d ? device_adam(h[r], (*d)[r], wd, true) : h[r].adam(wd, true));
    }
    optim::AdamParams hp;
    hp.beta2 = 0.5f;  // v falls below its running max within the three steps
    hp.amsgrad = true;
    optim::StepArgs a{step, 1.0f, optim::CpuIsa::scalar};
    optim::adam_step(s, hp, a, d ? Device::cuda(0) : Device::cpu());
    if (d) synchronize(Stream{Device::cuda(0)});
  });
}

TEST(OptimCuda, LionMatchesCpu) {
  ZT_SKIP_WITHOUT_CUDA();
  for_all_dtypes([](std::vector<RunBuffers>& h, std::vector<DeviceRun>* d, int step) {
    std::vector<optim::LionSegment> s;
    for (int r = 0; r < kRuns; ++r) {
      const optim::AdamSegment a = d ? device_adam(h[r], (*d)[r], 0.1f) : h[r].adam(0.1f);
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
    std::vector<optim::SgdSegment> s;
    for (int r = 0; r < kRuns; ++r) {
      const optim::AdamSegment a = d ? device_adam(h[r], (*d)[r], 0.01f) : h[r].adam(0.01f);
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

optim::LambSegment lamb_shard(RunBuffers& h, const DeviceRun* d, int r) {
  const float wd = r % 2 ? 0.0f : 0.0625f;
  return d ? device_adam(h, *d, wd) : h.adam(wd);
}

void lamb_on(const optim::LambParams& hp, std::vector<RunBuffers>& h, std::vector<DeviceRun>* d,
             int step) {
  std::vector<optim::LambSegment> s;
  for (int r = 0; r < kRuns; ++r)
    s.push_back(lamb_shard(h[r], d ? &(*d)[r] : nullptr, r));
  optim::StepArgs a{step, 0.5f, optim::CpuIsa::scalar};
  optim::lamb_step(s, hp, a, d ? Device::cuda(0) : Device::cpu());
  if (d) synchronize(Stream{Device::cuda(0)});
}

// min_coeff = max_coeff = 1 pins the trust ratio to 1 whatever the norms, so everything else of
// the update (moments, u, the copy) must equal the CPU scalar path bit for bit.
TEST(OptimCuda, LambClampedMatchesCpuBitwise) {
  ZT_SKIP_WITHOUT_CUDA();
  optim::LambParams hp;
  hp.lr = 0.015625f;
  hp.min_coeff = 1.0f;
  hp.max_coeff = 1.0f;
  for_all_dtypes([&](std::vector<RunBuffers>& h, std::vector<DeviceRun>* d, int step) {
    lamb_on(hp, h, d, step);
  });
}

// [Note: LAMB GPU tolerance]
// With a free trust ratio the GPU and the CPU differ only in how they sum |p|^2 and |u|^2: the GPU
// in f64 (exact to ~1e-15 here), the CPU scalar path serially in f32 over each 16384-element
// block, whose relative error is a random walk of ~sqrt(n) 2^-24 (below 4e-6 for n = 16384, as
// measured over random inputs). The ratio of the two norms then differs by at most the sum of half
// of each, so lr * coeff differs by delta <= 1e-5 relative, and so does each step's displacement
// d_t = p_{t-1} - p_t; m and v do not depend on p and stay bitwise equal. Rounding the shifted
// product and difference adds at most an ulp of d_t and of p_t per step, hence per element
//   |p_gpu - p_cpu| <= sum_t (1e-5 |d_t| + 2^-23 (|d_t| + |p_t|)).
// A relative bound on p itself cannot hold where p is near 0 while it moves by O(lr).
TEST(OptimCuda, LambTrustRatioMatchesCpu) {
  ZT_SKIP_WITHOUT_CUDA();
  optim::LambParams hp;  // DeepSpeed's clamp [0.01, 10]
  hp.lr = 0.015625f;
  for (DType gd : {DType::f32, DType::bf16}) {
    std::vector<RunBuffers> host;
    std::vector<DeviceRun> dev, again;  // two device replicas: the result must repeat bitwise
    for (int r = 0; r < kRuns; ++r) {
      std::vector<float> start = test::stream_values(21, 0, static_cast<uint64_t>(r), run_size(r));
      if (r == 5) start.assign(start.size(), 0.0f);  // |p| = 0 on step 1: trust ratio 1
      host.emplace_back(start, gd, true, DType::bf16);
      for (std::vector<DeviceRun>* v : {&dev, &again}) {
        DeviceRun d;
        d.off = r % 3 == 1 ? 1 : 0;
        d.n = host.back().n();
        d.master = DeviceRun::upload(start, DType::f32, d.off);
        d.s0 = DeviceRun::upload(host.back().s0, DType::f32, d.off);
        d.s1 = DeviceRun::upload(host.back().s1, DType::f32, d.off);
        d.copy = DeviceRun::upload(std::vector<float>(run_size(r), 0.0f), DType::bf16, d.off);
        v->push_back(d);
      }
    }
    std::vector<std::vector<double>> bound(kRuns);
    for (int r = 0; r < kRuns; ++r)
      bound[r].assign(run_size(r), 0.0);
    for (int step = 1; step <= 3; ++step) {
      for (int r = 0; r < kRuns; ++r) {
        const auto g = test::stream_values(22, static_cast<uint64_t>(step),
                                           static_cast<uint64_t>(r), run_size(r));
        host[r].set_grad(g);
        dev[r].grad = DeviceRun::upload(g, gd, dev[r].off);
        again[r].grad = dev[r].grad;
      }
      std::vector<std::vector<float>> before;
      for (const RunBuffers& h : host)
        before.push_back(h.master);
      lamb_on(hp, host, nullptr, step);
      lamb_on(hp, host, &dev, step);
      lamb_on(hp, host, &again, step);
      for (int r = 0; r < kRuns; ++r)
        for (size_t i = 0; i < bound[r].size(); ++i) {
          const double d = std::abs(static_cast<double>(before[r][i]) - host[r].master[i]);
          bound[r][i] += 1e-5 * d + 0x1p-23 * (d + std::abs(host[r].master[i]));
        }
    }
    for (int r = 0; r < kRuns; ++r) {
      const std::string what = str("run ", r, " grad ", dtype_name(gd));
      const std::vector<float> master = dev[r].download(dev[r].master);
      EXPECT_EQ(dev[r].download(dev[r].s0), host[r].s0) << what;
      EXPECT_EQ(dev[r].download(dev[r].s1), host[r].s1) << what;
      EXPECT_EQ(again[r].download(again[r].master), master) << what << ": not repeatable";
      size_t bad = 0, first_bad = 0;
      std::vector<float> rounded(master.size());
      for (size_t i = 0; i < master.size(); ++i) {
        if (std::abs(static_cast<double>(master[i]) - host[r].master[i]) > bound[r][i] &&
            bad++ == 0)
          first_bad = i;
        rounded[i] = static_cast<float>(bf16(master[i]));
      }
      EXPECT_EQ(bad, 0u) << what << ": element " << first_bad << " gpu " << master[first_bad]
                         << " cpu " << host[r].master[first_bad] << " bound "
                         << bound[r][first_bad];
      EXPECT_EQ(dev[r].download(dev[r].copy), rounded) << what << ": copy != bf16(master)";
    }
  }
}

// The device-norm two passes: the same result as lamb_step on the device, bitwise, and per-run
// norms within [Note: LAMB GPU tolerance]'s 1e-5 of the CPU's (the sums of squares; the test
// compares each step's, when the GPU's and the CPU's p still agree to ~1e-9).
TEST(OptimCuda, LambDeviceNormsTwoPassMatchesLambStep) {
  ZT_SKIP_WITHOUT_CUDA();
  optim::LambParams hp;
  hp.lr = 0.015625f;
  std::vector<RunBuffers> host;
  std::vector<DeviceRun> one_call, two_pass;
  for (int r = 0; r < kRuns; ++r) {
    host.emplace_back(test::stream_values(41, 0, static_cast<uint64_t>(r), run_size(r)),
                      DType::bf16, true, DType::bf16);
    for (std::vector<DeviceRun>* v : {&one_call, &two_pass}) {
      DeviceRun d;
      d.off = r % 3 == 1 ? 1 : 0;
      d.n = host.back().n();
      d.master = DeviceRun::upload(host.back().master, DType::f32, d.off);
      d.s0 = DeviceRun::upload(host.back().s0, DType::f32, d.off);
      d.s1 = DeviceRun::upload(host.back().s1, DType::f32, d.off);
      d.copy = DeviceRun::upload(std::vector<float>(run_size(r), 0.0f), DType::bf16, d.off);
      v->push_back(d);
    }
  }
  const Device gpu = Device::cuda(0);
  Tensor norms = Tensor::empty({2 * kRuns}, DType::i64, gpu);  // [kRuns, 2] f64 bits
  for (int step = 1; step <= 2; ++step) {
    std::vector<optim::LambSegment> h, a, b;
    for (int r = 0; r < kRuns; ++r) {
      const auto g = test::stream_values(42, static_cast<uint64_t>(step), static_cast<uint64_t>(r),
                                         run_size(r));
      host[r].set_grad(g);
      one_call[r].grad = DeviceRun::upload(g, DType::bf16, one_call[r].off);
      two_pass[r].grad = one_call[r].grad;
      h.push_back(lamb_shard(host[r], nullptr, r));
      a.push_back(lamb_shard(host[r], &one_call[r], r));
      b.push_back(lamb_shard(host[r], &two_pass[r], r));
    }
    const optim::StepArgs args{step, 0.5f, optim::CpuIsa::scalar};
    const std::vector<optim::LambNorms> want = optim::lamb_moments(h, hp, args);
    optim::lamb_apply(h, hp, args, want);
    optim::lamb_step(a, hp, args, gpu);
    optim::lamb_moments(b, hp, args, static_cast<double*>(norms.data()), gpu);
    optim::lamb_apply(b, hp, args, static_cast<const double*>(norms.data()), gpu);
    const Tensor got = norms.to(Device::cpu());
    const auto* sums = static_cast<const double*>(got.data());
    for (int r = 0; r < kRuns; ++r) {
      EXPECT_NEAR(sums[2 * r], want[r].param_sq, 1e-5 * want[r].param_sq) << "run " << r;
      EXPECT_NEAR(sums[2 * r + 1], want[r].update_sq, 1e-5 * want[r].update_sq) << "run " << r;
    }
  }
  for (int r = 0; r < kRuns; ++r) {
    const DeviceRun &x = one_call[r], &y = two_pass[r];
    EXPECT_EQ(y.download(y.master), x.download(x.master)) << "run " << r;
    EXPECT_EQ(y.download(y.s0), x.download(x.s0)) << "run " << r;
    EXPECT_EQ(y.download(y.s1), x.download(x.s1)) << "run " << r;
    EXPECT_EQ(y.download(y.copy), x.download(x.copy)) << "run " << r;
  }
}

// The launch picks the momentum kernel from any run, not the first: an empty run may leave its
// momentum buffer null.
TEST(OptimCuda, SgdMomentumAfterAnEmptyRunMatchesCpu) {
  ZT_SKIP_WITHOUT_CUDA();
  RunBuffers h(test::stream_values(31, 0, 0, 1000), DType::f32, false, DType::bf16);
  DeviceRun d;
  d.n = h.n();
  d.master = DeviceRun::upload(h.master, DType::f32, 0);
  d.s0 = DeviceRun::upload(h.s0, DType::f32, 0);
  optim::SgdParams hp;
  hp.momentum = 0.9f;
  for (int step = 1; step <= 2; ++step) {
    const auto g = test::stream_values(32, static_cast<uint64_t>(step), 0, 1000);
    h.set_grad(g);
    d.grad = DeviceRun::upload(g, DType::f32, 0);
    optim::SgdSegment on_host[2] = {optim::SgdSegment{}, h.sgd(0.0f, true)};
    optim::SgdSegment on_dev[2] = {optim::SgdSegment{}, h.sgd(0.0f, true)};
    on_dev[1].master = d.at<float>(d.master);
    on_dev[1].momentum_buffer = d.at<float>(d.s0);
    on_dev[1].grad = d.grad.data();
    const optim::StepArgs a{step, 1.0f, optim::CpuIsa::scalar};
    optim::sgd_step(on_host, hp, a);
    optim::sgd_step(on_dev, hp, a, Device::cuda(0));
    synchronize(Stream{Device::cuda(0)});
  }
  EXPECT_EQ(d.download(d.master), h.master);
  EXPECT_EQ(d.download(d.s0), h.s0);
}

}  // namespace
}  // namespace zt
