// optim::adam_step_lowp (bf16 values and moments, no masters) on the CPU: one step equals the f32
// adam_step from the widened values rounded once to bf16, bitwise, for every grad dtype, AdamW and
// Adam, with and without weight decay, over runs long enough for the OpenMP split; the SIMD paths
// equal the scalar path bitwise; an update below half a bf16 ulp leaves the values unchanged; bad
// inputs throw typed errors. See [Note: low-precision optimizer] in optim/low_precision.h.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "optim/lowp_test_util.h"
#include "optim/optim_test_util.h"
#include "zerotrain/core/error.h"
#include "zerotrain/optim/low_precision.h"

namespace zt {
namespace {

using test::LowpBuffers;
using test::RunBuffers;

const std::vector<size_t> kSizes = {1, 7, 33, 40000};  // the last spans several OpenMP blocks

std::vector<LowpBuffers> make_runs(DType grad_dtype) {
  std::vector<LowpBuffers> runs;
  for (size_t r = 0; r < kSizes.size(); ++r)
    runs.emplace_back(test::stream_values(21, 0, r, kSizes[r]), grad_dtype);
  return runs;
}

void set_grads(std::vector<LowpBuffers>& runs, int step) {
  for (size_t r = 0; r < runs.size(); ++r)
    runs[r].set_grad(test::stream_values(22, static_cast<uint64_t>(step), r, kSizes[r]));
}

std::vector<float> widen(const std::vector<bf16>& x) {
  std::vector<float> out;
  for (const bf16& b : x)
    out.push_back(bf16::to_float(b.bits));
  return out;
}

std::vector<uint16_t> round_bits(const std::vector<float>& x) {
  std::vector<uint16_t> out;
  for (float f : x)
    out.push_back(bf16::from_float(f));
  return out;
}

TEST(LowPrecisionOptim, OneStepIsTheF32StepRoundedOnce) {
  for (DType gd : {DType::f32, DType::bf16, DType::f16})
    for (bool decoupled : {true, false}) {
      std::vector<LowpBuffers> runs = make_runs(gd);
      optim::AdamParams hp;
      hp.lr = 1e-2f;
      hp.decoupled = decoupled;
      for (int step = 1; step <= 4; ++step) {
        set_grads(runs, step);
        // The f32 reference from the current bf16 state, widened exactly.
        std::vector<RunBuffers> ref;
        std::vector<optim::AdamSegment> ref_shards;
        std::vector<optim::AdamSegmentLowp> shards;
        for (size_t r = 0; r < runs.size(); ++r) {
          ref.emplace_back(widen(runs[r].p), gd, false, DType::bf16);
          ref.back().s0 = widen(runs[r].m);
          ref.back().s1 = widen(runs[r].v);
          ref.back().set_grad(runs[r].grad_f32);
        }
        for (size_t r = 0; r < runs.size(); ++r) {
          const float wd = r % 2 ? 0.0f : 0.1f;
          ref_shards.push_back(ref[r].adam(wd));
          shards.push_back(runs[r].shard(wd));
        }
        const optim::StepArgs args{step, 0.5f, optim::CpuIsa::scalar};
        optim::adam_step(ref_shards, hp, args);
        optim::adam_step_lowp(shards, hp, args);
        for (size_t r = 0; r < runs.size(); ++r) {
          const std::string what =
              str("grad ", dtype_name(gd), " decoupled ", decoupled, " step ", step, " run ", r);
          EXPECT_EQ(test::bits_of(runs[r].p), round_bits(ref[r].master)) << what;
          EXPECT_EQ(test::bits_of(runs[r].m), round_bits(ref[r].s0)) << what;
          EXPECT_EQ(test::bits_of(runs[r].v), round_bits(ref[r].s1)) << what;
        }
      }
    }
}

TEST(LowPrecisionOptim, SimdPathsEqualTheScalarPathBitwise) {
  for (optim::CpuIsa isa : test::supported_isas())
    for (DType gd : {DType::f32, DType::bf16, DType::f16}) {
      std::vector<LowpBuffers> scalar = make_runs(gd), simd = make_runs(gd);
      for (int step = 1; step <= 3; ++step) {
        set_grads(scalar, step);
        set_grads(simd, step);
        std::vector<optim::AdamSegmentLowp> a, b;
        for (size_t r = 0; r < scalar.size(); ++r) {
          a.push_back(scalar[r].shard(0.1f));
          b.push_back(simd[r].shard(0.1f));
        }
        optim::adam_step_lowp(a, optim::AdamParams{}, {step, 1.0f, optim::CpuIsa::scalar});
        optim::adam_step_lowp(b, optim::AdamParams{}, {step, 1.0f, isa});
      }
      for (size_t r = 0; r < scalar.size(); ++r) {
        const std::string what =
            str(optim::cpu_isa_name(isa), " grad ", dtype_name(gd), " run ", r);
        EXPECT_EQ(test::bits_of(simd[r].p), test::bits_of(scalar[r].p)) << what;
        EXPECT_EQ(test::bits_of(simd[r].m), test::bits_of(scalar[r].m)) << what;
        EXPECT_EQ(test::bits_of(simd[r].v), test::bits_of(scalar[r].v)) << what;
      }
    }
}

// Counts the elements whose value changed over three steps at `lr`.
int64_t moved_at(float lr) {
  std::vector<LowpBuffers> runs = make_runs(DType::bf16);
  std::vector<std::vector<uint16_t>> before;
  for (const LowpBuffers& r : runs)
    before.push_back(test::bits_of(r.p));
  optim::AdamParams hp;
  hp.lr = lr;
  for (int step = 1; step <= 3; ++step) {
    set_grads(runs, step);
    std::vector<optim::AdamSegmentLowp> shards;
    for (LowpBuffers& r : runs)
      shards.push_back(r.shard(0.0f));
    optim::adam_step_lowp(shards, hp, {step, 1.0f, optim::CpuIsa::best});
  }
  int64_t moved = 0;
  for (size_t r = 0; r < runs.size(); ++r) {
    const std::vector<uint16_t> after = test::bits_of(runs[r].p);
    for (size_t i = 0; i < after.size(); ++i)
      moved += after[i] != before[r][i];
  }
  return moved;
}

TEST(LowPrecisionOptim, UpdatesBelowHalfAnUlpLeaveTheValuesUnchanged) {
  int64_t total = 0;
  for (size_t n : kSizes)
    total += static_cast<int64_t>(n);
  // |update| <= 3 lr = 3e-7, below half an ulp of every value above 2^-14 or so: only the few
  // values within ~1e-4 of zero could move.
  EXPECT_LT(moved_at(1e-7f), total / 1000);
  EXPECT_GT(moved_at(1e-2f), total * 9 / 10);
}

TEST(LowPrecisionOptim, RejectsBadRunsAndArguments) {
  LowpBuffers run(test::stream_values(23, 0, 0, 8), DType::bf16);
  run.set_grad(test::stream_values(23, 1, 0, 8));
  const optim::AdamParams hp;
  const optim::StepArgs args;
  auto step_with = [&](optim::AdamSegmentLowp s) {
    const std::vector<optim::AdamSegmentLowp> runs = {run.shard(0.0f), s};
    optim::adam_step_lowp(runs, hp, args);
  };
  optim::AdamSegmentLowp s = run.shard(0.0f);
  s.param = nullptr;
  EXPECT_THROW(step_with(s), ValueError);
  s = run.shard(0.0f);
  s.exp_avg_sq = nullptr;
  EXPECT_THROW(step_with(s), ValueError);
  s = run.shard(0.0f);
  s.grad_dtype = DType::i32;
  EXPECT_THROW(step_with(s), DTypeError);
  s = run.shard(0.0f);
  s.n = -1;
  EXPECT_THROW(step_with(s), ValueError);
  s = run.shard(-0.5f);
  EXPECT_THROW(step_with(s), ValueError);
  optim::AdamParams bad = hp;
  bad.lr = -1.0f;
  const std::vector<optim::AdamSegmentLowp> one = {run.shard(0.0f)};
  EXPECT_THROW(optim::adam_step_lowp(one, bad, args), ValueError);
  EXPECT_THROW(optim::adam_step_lowp(one, hp, {0, 1.0f}), ValueError);
  try {
    step_with(s);
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("run #1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace zt
