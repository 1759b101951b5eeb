// train::plan_step and the micro-step loss scale ([Note: fp16 step]): without a scaler a
// non-finite norm skips only the update; with one it skips the update and the scheduler step and
// the scaler sees the overflow; a finite norm is unscaled before clipping and grad_scale is
// clip_coef / scale; the per-micro-step multiplier and the injection hook.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>

#include "zerotrain/train/fault_injection.h"
#include "zerotrain/train/fp16_step.h"
#include "zerotrain/train/grad_clip.h"

namespace zt::train {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(Fp16Step, WithoutAScalerANonFiniteNormSkipsOnlyTheUpdate) {
  std::optional<LossScaler> none;
  const StepPlan ok = plan_step(3.0, 1.0, none);
  EXPECT_FALSE(ok.overflow);
  EXPECT_TRUE(ok.update);
  EXPECT_TRUE(ok.step_scheduler);
  EXPECT_EQ(ok.norm, 3.0);
  EXPECT_EQ(ok.grad_scale, static_cast<float>(clip_coefficient(3.0, 1.0)));
  const StepPlan bad = plan_step(std::nan(""), 1.0, none);
  EXPECT_TRUE(bad.overflow);
  EXPECT_FALSE(bad.update);
  EXPECT_TRUE(bad.step_scheduler);
  // bf16's check_grad_overflow: an overflow as in fp16, the scheduler waits too.
  const StepPlan checked = plan_step(kInf, 1.0, none, true);
  EXPECT_FALSE(checked.update);
  EXPECT_FALSE(checked.step_scheduler);
  EXPECT_TRUE(plan_step(3.0, 1.0, none, true).step_scheduler);
}

TEST(Fp16Step, WithAScalerTheNormIsUnscaledAndAnOverflowSkipsTheScheduler) {
  LossScalerOptions o;
  o.initial_scale_power = 10;
  std::optional<LossScaler> scaler = LossScaler(o);
  const StepPlan ok = plan_step(2048.0, 1.0, scaler);
  EXPECT_EQ(ok.loss_scale, 1024.0);
  EXPECT_EQ(ok.norm, 2.0);
  EXPECT_TRUE(ok.update && ok.step_scheduler);
  EXPECT_EQ(ok.grad_scale, static_cast<float>(clip_coefficient(2.0, 1.0) / 1024.0));
  EXPECT_EQ(scaler->cur_iter(), 1);

  const StepPlan unclipped = plan_step(512.0, 0.0, scaler);
  EXPECT_EQ(unclipped.grad_scale, 1.0f / 1024.0f);

  const StepPlan over = plan_step(kInf, 1.0, scaler);
  EXPECT_TRUE(over.overflow);
  EXPECT_FALSE(over.update);
  EXPECT_FALSE(over.step_scheduler);
  EXPECT_EQ(over.loss_scale, 1024.0);
  EXPECT_EQ(scaler->cur_hysteresis(), 1);  // DeepSpeed's default hysteresis 2, one spent
  EXPECT_EQ(scaler->last_overflow_iter(), 2);
}

TEST(Fp16Step, MicroLossScaleAndInjection) {
  // The accumulation steps and ranks are in the head's global count of targets, not here.
  EXPECT_EQ(micro_loss_scale(1.0), 1.0f);  // f32/bf16
  EXPECT_EQ(micro_loss_scale(1024.0), 1024.0f);
  EXPECT_TRUE(std::isinf(micro_loss_scale(1024.0, true)));
  const FaultHooks hooks({}, {2, 5});
  EXPECT_TRUE(hooks.overflows_at(5));
  EXPECT_FALSE(hooks.overflows_at(3));
  EXPECT_FALSE(FaultHooks().overflows_at(2));
  TrainConfig c;
  c.precision.dtype = DType::bf16;
  EXPECT_FALSE(make_loss_scaler(c).has_value());
  c.precision.dtype = DType::f16;
  ASSERT_TRUE(make_loss_scaler(c).has_value());
  EXPECT_EQ(make_loss_scaler(c)->scale(), 65536.0);
}

}  // namespace
}  // namespace zt::train
