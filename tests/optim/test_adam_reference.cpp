// optim::adam_step as AdamW against the float64 reference of torch's formulas (reference_adamw.h)
// on every CPU path: 50-step f32 trajectories with weight decay and bias correction on and off,
// a large eps (its place after dividing by sqrt(bc2) shows), grad_scale != 1 and every grad dtype;
// the param copy equal to the rounded master; a zero gradient only decaying. The torch-recorded
// trajectories are test_optimizers_torch.cpp's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "optim/optim_test_util.h"
#include "optim/reference_adamw.h"
#include "support/test_util.h"
#include "zerotrain/optim/optimizers.h"

namespace zt {
namespace {

using test::RunBuffers;

// The grad as the step reads it: rounded to the run's grad dtype.
std::vector<double> grad_as_read(const RunBuffers& r) {
  std::vector<double> out(r.grad_f32.size());
  for (size_t i = 0; i < out.size(); ++i) {
    if (r.grad_dtype == DType::bf16)
      out[i] = static_cast<float>(r.grad_bf16[i]);
    else if (r.grad_dtype == DType::f16)
      out[i] = static_cast<float>(r.grad_f16[i]);
    else
      out[i] = r.grad_f32[i];
  }
  return out;
}

void adamw_on(RunBuffers& r, const test::AdamWRefParams& hp, optim::CpuIsa isa) {
  optim::AdamParams ap;
  ap.lr = hp.lr;
  ap.beta1 = hp.beta1;
  ap.beta2 = hp.beta2;
  ap.eps = hp.eps;
  ap.bias_correction = hp.bias_correction;
  const optim::AdamSegment s = r.adam(hp.weight_decay);
  optim::adam_step({&s, 1}, ap, optim::StepArgs{hp.step, hp.grad_scale, isa});
}

struct TrajectoryCase {
  float eps;
  float weight_decay;
  bool bias_correction;
  float grad_scale;
  DType grad_dtype;
};

TEST(AdamReference, F32TrajectoryMatchesFloat64ReferenceOver50Steps) {
  const size_t n = 1037;  // odd: not a multiple of any vector width
  std::vector<TrajectoryCase> cases = {{1e-8f, 0.f, true, 1.f, DType::f32},
                                       {1e-3f, 0.1f, true, 1.f, DType::f32},
                                       {1e-3f, 0.f, false, 1.f, DType::f32},
                                       {1e-8f, 0.1f, false, 1.f, DType::f32}};
  for (DType g : {DType::f32, DType::bf16, DType::f16})
    cases.push_back({1e-6f, 0.05f, true, 0.25f, g});
  for (optim::CpuIsa isa : test::supported_isas()) {
    uint64_t seed = 1000;
    for (const TrajectoryCase& c : cases) {
      SCOPED_TRACE(str(optim::cpu_isa_name(isa), " eps=", c.eps, " wd=", c.weight_decay,
                       " bias_correction=", c.bias_correction, " grad_scale=", c.grad_scale,
                       " grad ", dtype_name(c.grad_dtype)));
      RunBuffers run(test::random_floats(n, ++seed, -1.f, 1.f), c.grad_dtype, false, DType::bf16);
      test::AdamWState ref{std::vector<double>(run.master.begin(), run.master.end()),
                           std::vector<double>(n, 0.0), std::vector<double>(n, 0.0)};
      test::AdamWRefParams hp;
      hp.lr = 1e-2f;
      hp.eps = c.eps;
      hp.weight_decay = c.weight_decay;
      hp.bias_correction = c.bias_correction;
      hp.grad_scale = c.grad_scale;
      for (int64_t step = 1; step <= 50; ++step) {
        hp.step = step;
        run.set_grad(test::random_floats(n, ++seed, -2.f, 2.f));
        adamw_on(run, hp, isa);
        test::adamw_reference_step(ref, grad_as_read(run), hp);
      }
      // Each step rounds p to f32 at the scale it had then: the error is relative to the largest
      // |p|, which small final values inherit.
      double p_max = 0;
      for (double x : ref.p)
        p_max = std::max(p_max, std::fabs(x));
      auto doubles = [](const std::vector<float>& v) {
        return std::vector<double>(v.begin(), v.end());
      };
      test::expect_close(ref.p, doubles(run.master), {1e-6 * p_max, 1e-6}, "param");
      // m = beta1 m + (1 - beta1) g cancels: its f32 error is relative to |g|, not to |m|.
      test::expect_close(ref.m, doubles(run.s0), {1e-7 * c.grad_scale, 1e-6}, "m");
      test::expect_close(ref.v, doubles(run.s1), {1e-12, 1e-6}, "v");
    }
  }
}

TEST(AdamReference, ParamCopyIsTheRoundedMaster) {
  const size_t n = 777;
  for (DType copy_dtype : {DType::bf16, DType::f16}) {
    SCOPED_TRACE(dtype_name(copy_dtype));
    RunBuffers run(test::random_floats(n, 5, -1.f, 1.f), DType::bf16, true, copy_dtype);
    test::AdamWRefParams hp;
    hp.weight_decay = 0.01f;
    for (int64_t step = 1; step <= 3; ++step) {
      hp.step = step;
      run.set_grad(test::random_floats(n, 10 + static_cast<uint64_t>(step), -1.f, 1.f));
      adamw_on(run, hp, optim::CpuIsa::best);
      for (size_t i = 0; i < n; ++i) {
        const uint16_t want =
            copy_dtype == DType::bf16 ? bf16(run.master[i]).bits : f16(run.master[i]).bits;
        ASSERT_EQ(run.copy[i], want) << "step " << step << " element " << i;
      }
    }
  }
}

TEST(AdamReference, ZeroGradientOnlyDecays) {
  const size_t n = 9;
  RunBuffers run(test::random_floats(n, 3, -1.f, 1.f), DType::f32, false, DType::bf16);
  const std::vector<float> before = run.master;
  run.set_grad(std::vector<float>(n, 0.0f));
  test::AdamWRefParams hp;
  hp.lr = 0.1f;
  hp.weight_decay = 0.5f;
  adamw_on(run, hp, optim::CpuIsa::best);
  const float decay = static_cast<float>(1.0 - 0.1 * 0.5);
  for (size_t i = 0; i < n; ++i)
    EXPECT_EQ(run.master[i], before[i] * decay) << i;
}

}  // namespace
}  // namespace zt
