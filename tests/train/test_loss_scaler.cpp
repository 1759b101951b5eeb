// train::LossScaler against loss-scale sequences worked by hand from DeepSpeed 0.19's
// DynamicLossScaler.update_scale ([Note: dynamic loss scale]): hysteresis 2 with and without
// consecutive_hysteresis, window growth, the min_loss_scale floor and the error at it, a static
// scale; its JSON state round-trips and a restored scaler continues exactly; bad options and
// states are typed errors naming the key.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <vector>

#include "io/io_test_util.h"
#include "zerotrain/core/error.h"
#include "zerotrain/train/loss_scaler.h"

namespace zt {
namespace {

using train::LossScaler;
using train::LossScalerOptions;

LossScalerOptions dynamic_options(int64_t power, int64_t window, int64_t hysteresis,
                                  bool consecutive, double min_scale = 1) {
  LossScalerOptions o;
  o.initial_scale_power = power;
  o.loss_scale_window = window;
  o.hysteresis = hysteresis;
  o.consecutive_hysteresis = consecutive;
  o.min_loss_scale = min_scale;
  return o;
}

// The scale after each update of `overflows` (1: overflow).
std::vector<double> scales_after(LossScaler& s, const std::vector<int>& overflows,
                                 std::vector<int64_t>* hysteresis = nullptr) {
  std::vector<double> out;
  for (int o : overflows) {
    s.update(o != 0);
    out.push_back(s.scale());
    if (hysteresis) hysteresis->push_back(s.cur_hysteresis());
  }
  return out;
}

// clean x3, overflow x2, clean x3, overflow, clean, overflow x2.
const std::vector<int> kPattern = {0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 1, 1};

TEST(LossScaler, HysteresisTwoWithoutConsecutiveHysteresis) {
  LossScaler s(dynamic_options(4, 2, 2, false));
  EXPECT_TRUE(s.dynamic());
  EXPECT_EQ(s.scale(), 16.0);
  std::vector<int64_t> h;
  const std::vector<double> scales = scales_after(s, kPattern, &h);
  // Growth when (iter - last_overflow - 1) is a positive multiple of 2: at iter 2 and iter 7;
  // the first overflow only spends the hysteresis; it stays spent across the clean iter 9, so
  // iters 10 and 11 halve twice.
  EXPECT_EQ(scales, (std::vector<double>{16, 16, 32, 32, 16, 16, 16, 32, 32, 32, 16, 8}));
  EXPECT_EQ(h, (std::vector<int64_t>{2, 2, 2, 1, 1, 1, 1, 2, 1, 1, 1, 1}));
  EXPECT_EQ(s.cur_iter(), 12);
  EXPECT_EQ(s.last_overflow_iter(), 11);
}

TEST(LossScaler, HysteresisTwoWithConsecutiveHysteresis) {
  LossScaler s(dynamic_options(4, 2, 2, true));
  std::vector<int64_t> h;
  const std::vector<double> scales = scales_after(s, kPattern, &h);
  // Every clean update refills the hysteresis, so the overflow at iter 10 only spends it again.
  EXPECT_EQ(scales, (std::vector<double>{16, 16, 32, 32, 16, 16, 16, 32, 32, 32, 32, 16}));
  EXPECT_EQ(h, (std::vector<int64_t>{2, 2, 2, 1, 1, 2, 2, 2, 1, 2, 1, 1}));
}

TEST(LossScaler, DoublesEveryWindowOfCleanUpdates) {
  LossScaler s(dynamic_options(0, 3, 2, false));
  EXPECT_EQ(s.scale(), 1.0);
  // First doubling at the (window + 1)-th clean update, then every window.
  EXPECT_EQ(scales_after(s, std::vector<int>(10, 0)),
            (std::vector<double>{1, 1, 1, 2, 2, 2, 4, 4, 4, 8}));
  // After an overflow (hysteresis 2: no drop) the count restarts from it.
  EXPECT_EQ(scales_after(s, {1, 0, 0, 0, 0}), (std::vector<double>{8, 8, 8, 8, 16}));
}

TEST(LossScaler, HysteresisOneHalvesOnEveryOverflow) {
  LossScaler s(dynamic_options(3, 1000, 1, false));
  EXPECT_EQ(scales_after(s, {1, 0, 1, 1}), (std::vector<double>{4, 4, 2, 1}));
}

TEST(LossScaler, FloorsAtMinLossScaleThenRaises) {
  LossScaler s(dynamic_options(2, 1000, 1, false, 3));
  s.update(true);
  EXPECT_EQ(s.scale(), 3.0);  // max(4 / 2, 3)
  test::expect_error<Error>([&] { s.update(true); }, {"[loss_scaler]", "minimum loss scale", "3"});

  LossScalerOptions o = dynamic_options(1, 1000, 1, false, 1);
  o.raise_error_at_min_scale = false;
  LossScaler quiet(o);
  EXPECT_EQ(scales_after(quiet, {1, 1, 1}), (std::vector<double>{1, 1, 1}));
}

TEST(LossScaler, HysteresisDelaysTheErrorAtTheMinimum) {
  LossScaler s(dynamic_options(0, 1000, 2, false, 1));
  s.update(true);  // spends the hysteresis; the scale (already the minimum) stays
  EXPECT_EQ(s.scale(), 1.0);
  EXPECT_THROW(s.update(true), Error);
}

TEST(LossScaler, StaticScaleNeverChanges) {
  LossScalerOptions o;
  o.loss_scale = 128;
  LossScaler s(o);
  EXPECT_FALSE(s.dynamic());
  EXPECT_EQ(scales_after(s, {1, 1, 1, 0, 0, 0, 1}), (std::vector<double>(7, 128.0)));
  EXPECT_EQ(s.state(), nlohmann::json::parse(R"({"dynamic": false, "cur_scale": 128.0})"));
}

TEST(LossScaler, DefaultsAreDeepSpeeds) {
  LossScaler s(LossScalerOptions{});
  EXPECT_TRUE(s.dynamic());
  EXPECT_EQ(s.scale(), 65536.0);
  EXPECT_EQ(s.cur_hysteresis(), 2);
  EXPECT_EQ(s.last_overflow_iter(), -1);
}

TEST(LossScaler, RestoredStateContinuesExactly) {
  const LossScalerOptions o = dynamic_options(4, 2, 2, false);
  LossScaler straight(o);
  const std::vector<double> all = scales_after(straight, kPattern);

  LossScaler first(o);
  scales_after(first, std::vector<int>(kPattern.begin(), kPattern.begin() + 5));
  const nlohmann::json saved = nlohmann::json::parse(first.state().dump());
  EXPECT_EQ(saved.at("cur_iter"), 5);
  EXPECT_EQ(saved.at("last_overflow_iter"), 4);
  EXPECT_EQ(saved.at("cur_hysteresis"), 1);
  LossScaler second(o);
  second.load_state(saved);
  const std::vector<double> rest =
      scales_after(second, std::vector<int>(kPattern.begin() + 5, kPattern.end()));
  EXPECT_EQ(rest, std::vector<double>(all.begin() + 5, all.end()));
  EXPECT_EQ(second.state(), straight.state());
}

TEST(LossScaler, BadOptionsAndStatesAreTypedErrors) {
  auto bad = [](auto edit, std::vector<std::string> parts) {
    LossScalerOptions o;
    edit(o);
    test::expect_error<ValueError>([&] { LossScaler s(o); }, parts);
  };
  bad([](LossScalerOptions& o) { o.loss_scale = -1; }, {"loss_scale", "-1"});
  bad([](LossScalerOptions& o) { o.initial_scale_power = 128; }, {"initial_scale_power", "128"});
  bad([](LossScalerOptions& o) { o.loss_scale_window = 0; }, {"loss_scale_window", "0"});
  bad([](LossScalerOptions& o) { o.hysteresis = 0; }, {"hysteresis", "0"});
  bad([](LossScalerOptions& o) { o.min_loss_scale = 0; }, {"min_loss_scale", "0"});

  LossScaler s(LossScalerOptions{});
  test::expect_error<ValueError>([&] { s.load_state(nlohmann::json::object()); }, {"dynamic"});
  test::expect_error<ValueError>(
      [&] { s.load_state(nlohmann::json::parse(R"({"dynamic": false, "cur_scale": 8})")); },
      {"static", "dynamic"});
  test::expect_error<ValueError>(
      [&] {
        s.load_state(nlohmann::json::parse(
            R"({"dynamic": true, "cur_scale": 8, "cur_iter": "3", "last_overflow_iter": -1,
                "cur_hysteresis": 2})"));
      },
      {"cur_iter", "\"3\""});
  test::expect_error<ValueError>(
      [&] {
        s.load_state(nlohmann::json::parse(
            R"({"dynamic": true, "cur_scale": 8, "cur_iter": 3, "last_overflow_iter": 3,
                "cur_hysteresis": 2})"));
      },
      {"inconsistent"});
}

}  // namespace
}  // namespace zt
