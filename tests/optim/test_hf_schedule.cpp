// LR schedules against Hugging Face's get_*_schedule_with_warmup formulas at the boundaries: step
// 0, inside and at the end of warmup, mid-decay, the last step, the end and past it; warmup 0,
// warmup == total, the cosine floor; name parsing and bad configurations.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "zerotrain/core/error.h"
#include "zerotrain/optim/hf_schedule.h"

namespace zt {
namespace {

using optim::LrSchedule;
using optim::LrScheduleConfig;
using optim::ScheduleKind;

LrSchedule make(ScheduleKind kind, int64_t warmup, int64_t total, double min_ratio = 0.0) {
  LrScheduleConfig c;
  c.kind = kind;
  c.base_lr = 4e-4;
  c.warmup_steps = warmup;
  c.total_steps = total;
  c.min_lr_ratio = min_ratio;
  return LrSchedule(c);
}

TEST(OptimHfSchedule, WarmupRampsFromZero) {
  for (ScheduleKind k : {ScheduleKind::constant, ScheduleKind::linear, ScheduleKind::cosine}) {
    SCOPED_TRACE(optim::schedule_name(k));
    const LrSchedule s = make(k, 10, 110);
    EXPECT_EQ(s.factor(0), 0.0);  // the first update of a warmed-up run has lr 0, as in HF
    EXPECT_DOUBLE_EQ(s.factor(1), 0.1);
    EXPECT_DOUBLE_EQ(s.factor(5), 0.5);
    EXPECT_DOUBLE_EQ(s.factor(9), 0.9);
    EXPECT_DOUBLE_EQ(s.factor(10), 1.0);  // end of warmup: the full lr
    EXPECT_DOUBLE_EQ(s.lr_at(5), 2e-4);
  }
}

TEST(OptimHfSchedule, ConstantStaysAtBaseLr) {
  const LrSchedule s = make(ScheduleKind::constant, 4, 100);
  EXPECT_DOUBLE_EQ(s.factor(2), 0.5);
  EXPECT_DOUBLE_EQ(s.factor(4), 1.0);
  EXPECT_DOUBLE_EQ(s.factor(99), 1.0);
  EXPECT_DOUBLE_EQ(s.factor(100000), 1.0);
  EXPECT_DOUBLE_EQ(make(ScheduleKind::constant, 0, 0).lr_at(0), 4e-4);
}

TEST(OptimHfSchedule, LinearDecaysToZeroAtTheEnd) {
  const LrSchedule s = make(ScheduleKind::linear, 10, 100);
  EXPECT_DOUBLE_EQ(s.factor(10), 90.0 / 90.0);
  EXPECT_DOUBLE_EQ(s.factor(55), 45.0 / 90.0);
  EXPECT_DOUBLE_EQ(s.factor(99), 1.0 / 90.0);  // the last step of a 100-step run
  EXPECT_EQ(s.factor(100), 0.0);
  EXPECT_EQ(s.factor(150), 0.0);  // past the end: clamped at 0
  const LrSchedule no_warmup = make(ScheduleKind::linear, 0, 8);
  EXPECT_DOUBLE_EQ(no_warmup.factor(0), 1.0);
  EXPECT_DOUBLE_EQ(no_warmup.factor(2), 0.75);
  // warmup == total: HF divides by max(1, 0) and reaches 0 right at the end of warmup.
  const LrSchedule all_warmup = make(ScheduleKind::linear, 5, 5);
  EXPECT_DOUBLE_EQ(all_warmup.factor(4), 0.8);
  EXPECT_EQ(all_warmup.factor(5), 0.0);
}

TEST(OptimHfSchedule, CosineFollowsHalfWave) {
  const LrSchedule s = make(ScheduleKind::cosine, 10, 110);
  EXPECT_DOUBLE_EQ(s.factor(10), 1.0);
  EXPECT_NEAR(s.factor(35), 0.5 * (1.0 + std::cos(std::numbers::pi * 0.25)), 1e-15);
  EXPECT_NEAR(s.factor(60), 0.5, 1e-15);
  EXPECT_NEAR(s.factor(109), 0.5 * (1.0 + std::cos(std::numbers::pi * 0.99)), 1e-15);
  EXPECT_NEAR(s.factor(110), 0.0, 1e-15);
  // Past the end HF's cosine does not clamp its progress: it climbs back up the wave.
  EXPECT_NEAR(s.factor(160), 0.5, 1e-15);
  EXPECT_NEAR(s.factor(210), 1.0, 1e-15);
}

TEST(OptimHfSchedule, CosineWithMinLrRatioFloorsTheWave) {
  const LrSchedule s = make(ScheduleKind::cosine, 10, 110, 0.1);
  EXPECT_DOUBLE_EQ(s.factor(5), 0.5);  // warmup is not floored (HF)
  EXPECT_NEAR(s.factor(10), 1.0, 1e-15);
  EXPECT_NEAR(s.factor(60), 0.5 * 0.9 + 0.1, 1e-15);
  EXPECT_NEAR(s.factor(110), 0.1, 1e-15);
  EXPECT_NEAR(s.lr_at(110), 4e-5, 1e-18);
}

TEST(OptimHfSchedule, ParsesHuggingFaceNames) {
  EXPECT_EQ(optim::parse_schedule_kind("constant"), ScheduleKind::constant);
  EXPECT_EQ(optim::parse_schedule_kind("constant_with_warmup"), ScheduleKind::constant);
  EXPECT_EQ(optim::parse_schedule_kind("linear"), ScheduleKind::linear);
  EXPECT_EQ(optim::parse_schedule_kind("cosine"), ScheduleKind::cosine);
  EXPECT_EQ(optim::parse_schedule_kind("cosine_with_min_lr"), ScheduleKind::cosine);
  try {
    optim::parse_schedule_kind("polynomial");
    ADD_FAILURE() << "an unknown schedule was accepted";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("polynomial"), std::string::npos) << e.what();
  }
}

TEST(OptimHfSchedule, RejectsBadConfigurations) {
  auto config = [] {
    LrScheduleConfig c;
    c.total_steps = 10;
    return c;
  };
  LrScheduleConfig c = config();
  c.base_lr = -1;
  EXPECT_THROW(LrSchedule{c}, ValueError);
  c = config();
  c.warmup_steps = -1;
  EXPECT_THROW(LrSchedule{c}, ValueError);
  c = config();
  c.total_steps = -5;
  EXPECT_THROW(LrSchedule{c}, ValueError);
  c = config();
  c.min_lr_ratio = 1.5;
  EXPECT_THROW(LrSchedule{c}, ValueError);
  c = config();
  c.num_cycles = NAN;
  EXPECT_THROW(LrSchedule{c}, ValueError);
  EXPECT_THROW(LrSchedule(config()).factor(-1), ValueError);
}

}  // namespace
}  // namespace zt
