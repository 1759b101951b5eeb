// The CPU optimizers' SIMD paths (AVX2, AVX-512: whichever this CPU has; the others are skipped)
// against the scalar path, for every grad dtype (f32, bf16, f16) and param copy (none, bf16, f16):
// masters, states and copies bitwise equal after a few steps (LAMB: states bitwise, params within
// float rounding, since its norms sum in a different order); and the copies round exactly as
// core/half.h does, including ties, f16 subnormals and overflow.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "optim/optim_test_util.h"
#include "zerotrain/core/error.h"
#include "zerotrain/optim/optimizers.h"

namespace zt {
namespace {

using optim::CpuIsa;
using test::RunBuffers;

// Three runs, one longer than a block (16384) so several blocks and tails are exercised; under
// 2 blocks in all, so the driver stays on one thread (the threaded split has its own test).
const std::vector<size_t> kSizes = {20011, 5, 1283};

std::vector<RunBuffers> make_runs(DType grad_dtype, bool copy, DType copy_dtype) {
  std::vector<RunBuffers> runs;
  for (size_t t = 0; t < kSizes.size(); ++t)
    runs.emplace_back(test::stream_values(99, 0, t, kSizes[t]), grad_dtype, copy, copy_dtype);
  return runs;
}

using StepFn = std::function<void(std::vector<RunBuffers>&, const optim::StepArgs&)>;

// Runs `steps` steps of `fn` on `isa`.
std::vector<RunBuffers> run_path(const StepFn& fn, CpuIsa isa, DType grad_dtype, bool copy,
                                 DType copy_dtype, int steps = 3) {
  std::vector<RunBuffers> runs = make_runs(grad_dtype, copy, copy_dtype);
  for (int step = 1; step <= steps; ++step) {
    for (size_t t = 0; t < runs.size(); ++t) {
      std::vector<float> g = test::stream_values(98, static_cast<uint64_t>(step), t, kSizes[t]);
      if (t == 0) g[7] = 0.0f;  // sign(0) for Lion, a zero moment contribution for the others
      runs[t].set_grad(g);
    }
    fn(runs, optim::StepArgs{step, 0.75f, isa});
  }
  return runs;
}

void expect_bitwise(const std::vector<float>& a, const std::vector<float>& b,
                    const std::string& what) {
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0) << what;
}

void compare_paths(const StepFn& fn, bool lamb) {
  const auto simd = test::supported_isas();
  if (simd.size() < 2) GTEST_SKIP() << "no SIMD path on this CPU";
  for (DType gd : {DType::f32, DType::bf16, DType::f16})
    for (int copy = 0; copy < 3; ++copy) {
      const DType cd = copy == 2 ? DType::f16 : DType::bf16;
      const auto ref = run_path(fn, CpuIsa::scalar, gd, copy > 0, cd);
      for (CpuIsa isa : simd) {
        if (isa == CpuIsa::scalar) continue;
        const std::string what = str(optim::cpu_isa_name(isa), " grad ", dtype_name(gd), " copy ",
                                     copy == 0 ? "none" : dtype_name(cd));
        const auto got = run_path(fn, isa, gd, copy > 0, cd);
        for (size_t t = 0; t < ref.size(); ++t) {
          expect_bitwise(ref[t].s0, got[t].s0, what + " s0");
          expect_bitwise(ref[t].s1, got[t].s1, what + " s1");
          expect_bitwise(ref[t].s2, got[t].s2, what + " s2");
          if (!lamb) {
            expect_bitwise(ref[t].master, got[t].master, what + " master");
            EXPECT_EQ(ref[t].copy, got[t].copy) << what << " copy";
            continue;
          }
          for (size_t i = 0; i < ref[t].master.size(); ++i)
            ASSERT_NEAR(ref[t].master[i], got[t].master[i],
                        1e-6 * std::max(1.0f, std::abs(ref[t].master[i])))
                << what << " master " << i;
        }
      }
    }
}

TEST(OptimCpuIsa, AdamWMatchesScalarBitwise) {
  compare_paths(
      [](std::vector<RunBuffers>& runs, const optim::StepArgs& a) {
        std::vector<optim::AdamSegment> s;
        for (size_t t = 0; t < runs.size(); ++t)
          s.push_back(runs[t].adam(t == 1 ? 0.0f : 0.0625f));
        optim::adam_step(s, optim::AdamParams{}, a);
      },
      false);
}

TEST(OptimCpuIsa, AdamL2MatchesScalarBitwise) {
  compare_paths(
      [](std::vector<RunBuffers>& runs, const optim::StepArgs& a) {
        std::vector<optim::AdamSegment> s;
        for (auto& r : runs)
          s.push_back(r.adam(0.125f));
        optim::AdamParams hp;
        hp.decoupled = false;
        hp.bias_correction = false;
        optim::adam_step(s, hp, a);
      },
      false);
}

TEST(OptimCpuIsa, AdamAmsgradMatchesScalarBitwise) {
  compare_paths(
      [](std::vector<RunBuffers>& runs, const optim::StepArgs& a) {
        std::vector<optim::AdamSegment> s;
        for (size_t t = 0; t < runs.size(); ++t)
          s.push_back(runs[t].adam(t == 1 ? 0.0f : 0.0625f, true));
        optim::AdamParams hp;
        hp.beta2 = 0.875f;  // v often falls below its running max
        hp.amsgrad = true;
        optim::adam_step(s, hp, a);
      },
      false);
}

TEST(OptimCpuIsa, LionMatchesScalarBitwise) {
  compare_paths(
      [](std::vector<RunBuffers>& runs, const optim::StepArgs& a) {
        std::vector<optim::LionSegment> s;
        for (auto& r : runs)
          s.push_back(r.lion(0.1f));
        optim::lion_step(s, optim::LionParams{}, a);
      },
      false);
}

TEST(OptimCpuIsa, SgdMatchesScalarBitwise) {
  for (int variant = 0; variant < 3; ++variant) {
    SCOPED_TRACE(variant);
    optim::SgdParams hp;
    hp.lr = 0.01f;
    hp.momentum = variant == 0 ? 0.0f : 0.9f;
    hp.dampening = variant == 1 ? 0.1f : 0.0f;
    hp.nesterov = variant == 2;
    compare_paths(
        [&](std::vector<RunBuffers>& runs, const optim::StepArgs& a) {
          std::vector<optim::SgdSegment> s;
          for (auto& r : runs)
            s.push_back(r.sgd(0.01f, hp.momentum != 0.0f));
          optim::sgd_step(s, hp, a);
        },
        false);
  }
}

TEST(OptimCpuIsa, LambMatchesScalar) {
  compare_paths(
      [](std::vector<RunBuffers>& runs, const optim::StepArgs& a) {
        std::vector<optim::LambSegment> s;
        for (auto& r : runs)
          s.push_back(r.adam(0.01f));
        optim::lamb_step(s, optim::LambParams{}, a);
      },
      true);
}

// With lr = 0 and no decay SGD leaves the masters as they are, so each copy must be exactly
// core/half.h's rounding of the value.
TEST(OptimCpuIsa, CopiesRoundLikeCoreHalf) {
  std::vector<float> values = {0.0f,
                               -0.0f,
                               1.0f,
                               -2.5f,
                               1e-6f,
                               -3e-7f,
                               6e-8f,
                               65504.0f,
                               65520.0f,
                               70000.0f,
                               -1e30f,
                               3.4e38f,
                               1.0f + 1.0f / 256,
                               1.0f + 3.0f / 256,
                               1.0f + 1.0f / 2048,
                               1.0f + 3.0f / 2048,
                               5.9604645e-8f,
                               2.9802322e-8f};
  for (int i = 0; i < 40; ++i)
    values.push_back(test::stream_value(7, 0, 0, static_cast<uint64_t>(i)) * 1e3f);
  for (CpuIsa isa : test::supported_isas())
    for (DType cd : {DType::bf16, DType::f16}) {
      RunBuffers r(values, DType::f32, true, cd);
      r.set_grad(std::vector<float>(values.size(), 0.5f));
      optim::SgdParams hp;
      hp.lr = 0.0f;
      std::vector<optim::SgdSegment> s = {r.sgd(0.0f, false)};
      optim::sgd_step(s, hp, optim::StepArgs{1, 1.0f, isa});
      for (size_t i = 0; i < values.size(); ++i) {
        const uint16_t want = cd == DType::bf16 ? bf16(values[i]).bits : f16(values[i]).bits;
        EXPECT_EQ(r.copy[i], want)
            << optim::cpu_isa_name(isa) << " " << dtype_name(cd) << " " << values[i];
      }
      EXPECT_EQ(r.master, values);
    }
}

// Enough elements for the driver's OpenMP split: the best path, threaded, equals the scalar path.
TEST(OptimCpuIsa, ThreadedStepMatchesScalarBitwise) {
  auto run = [](optim::CpuIsa isa) {
    std::vector<RunBuffers> runs;
    for (uint64_t t = 0; t < 3; ++t)
      runs.emplace_back(test::stream_values(31, 0, t, 40000), DType::bf16, true, DType::bf16);
    for (int step = 1; step <= 2; ++step) {
      std::vector<optim::AdamSegment> s;
      for (uint64_t t = 0; t < 3; ++t) {
        runs[t].set_grad(test::stream_values(31, static_cast<uint64_t>(step), t, 40000));
        s.push_back(runs[t].adam(0.01f));
      }
      optim::adam_step(s, optim::AdamParams{}, optim::StepArgs{step, 1.0f, isa});
    }
    return runs;
  };
  const auto ref = run(CpuIsa::scalar), got = run(CpuIsa::best);
  for (size_t t = 0; t < ref.size(); ++t) {
    expect_bitwise(ref[t].master, got[t].master, "master");
    expect_bitwise(ref[t].s1, got[t].s1, "exp_avg_sq");
    EXPECT_EQ(ref[t].copy, got[t].copy);
  }
}

TEST(OptimCpuIsa, BestIsTheWidestSupported) {
  const CpuIsa best = optim::best_cpu_isa();
  EXPECT_TRUE(optim::cpu_isa_supported(best));
  if (optim::cpu_isa_supported(CpuIsa::avx512)) {
    EXPECT_EQ(best, CpuIsa::avx512);
  }
  EXPECT_TRUE(optim::cpu_isa_supported(CpuIsa::scalar));
}

}  // namespace
}  // namespace zt
