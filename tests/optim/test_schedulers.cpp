// The optim/ schedulers against DeepSpeed's formulas (and HF's) at 20 sample iterations per case,
// boundaries included, recorded by tools/reference/make_scheduler_reference.py in
// tests/fixtures/optim/scheduler_reference.json; stepping, the JSON state round trip, bad configs,
// and the typed section (config/scheduler_config.h) building the same schedule as its JSON block.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>

#include "support/test_util.h"
#include "zerotrain/config/scheduler_config.h"
#include "zerotrain/core/error.h"
#include "zerotrain/optim/deepspeed_schedules.h"
#include "zerotrain/optim/optimizers.h"
#include "zerotrain/optim/scheduler.h"

namespace zt {
namespace {

nlohmann::json load_reference() {
  const auto path = test::fixtures_dir() / "optim" / "scheduler_reference.json";
  std::ifstream file(path);
  if (!file) throw std::runtime_error("cannot open " + path.string());
  return nlohmann::json::parse(file);
}

void expect_same(double got, double want, const std::string& what) {
  EXPECT_NEAR(got, want, 1e-12 * std::abs(want) + 1e-18) << what;
}

TEST(OptimSchedulers, MatchDeepSpeedFormulasAtSampleSteps) {
  const nlohmann::json doc = load_reference();
  const double base_lr = doc.at("base_lr");
  std::set<std::string> types;
  for (const auto& c : doc.at("cases")) {
    const nlohmann::json config = {{"type", c.at("type")}, {"params", c.at("params")}};
    SCOPED_TRACE(config.dump());
    const auto s = optim::make_scheduler(config, base_lr);
    types.insert(std::string(s->type()));
    ASSERT_EQ(c.at("samples").size(), 20u);
    for (const auto& sample : c.at("samples")) {
      const int64_t it = sample.at("iteration");
      expect_same(s->lr_at(it), sample.at("lr"), str("lr at ", it));
      const auto betas = s->betas_at(it);
      ASSERT_EQ(betas.has_value(), sample.contains("beta1")) << it;
      if (betas) {
        expect_same(betas->beta1, sample.at("beta1"), str("beta1 at ", it));
        EXPECT_EQ(betas->beta2, 0.99);
      }
    }
  }
  for (const char* t : {"WarmupLR", "WarmupDecayLR", "WarmupCosineLR", "OneCycle", "LRRangeTest"})
    EXPECT_TRUE(types.count(t)) << t;
}

TEST(OptimSchedulers, StepAdvancesFromTheConstructorsIteration) {
  const auto s = optim::make_scheduler(
      {{"type", "WarmupDecayLR"},
       {"params", {{"total_num_steps", 10}, {"warmup_num_steps", 4}, {"warmup_type", "linear"}}}},
      1.0);
  EXPECT_EQ(s->last_batch_iteration(), -1);
  EXPECT_EQ(s->lr(), 0.0);  // warmup_min_lr for the first update, as DeepSpeed sets it
  for (int64_t k = 0; k < 12; ++k) {
    s->step();
    EXPECT_EQ(s->last_batch_iteration(), k);
    EXPECT_EQ(s->lr(), s->lr_at(k));
  }
  EXPECT_EQ(s->lr_at(2), 0.001 * 0.5);
}

TEST(OptimSchedulers, StateRoundTripsThroughJson) {
  const nlohmann::json config = {
      {"type", "OneCycle"},
      {"params", {{"cycle_min_lr", 1e-4}, {"cycle_max_lr", 1e-3}, {"cycle_first_step_size", 5}}}};
  const auto a = optim::make_scheduler(config, 1.0);
  for (int i = 0; i < 7; ++i)
    a->step();
  const nlohmann::json state = nlohmann::json::parse(a->state().dump());
  EXPECT_EQ(state.at("type"), "OneCycle");
  EXPECT_EQ(state.at("last_batch_iteration"), 6);
  EXPECT_EQ(state.at("lr"), a->lr());
  EXPECT_EQ(state.at("betas").at(0), a->betas()->beta1);
  const auto b = optim::make_scheduler(config, 1.0);
  b->load_state(state);
  EXPECT_EQ(b->last_batch_iteration(), 6);
  EXPECT_EQ(b->lr(), a->lr());
  EXPECT_EQ(b->betas()->beta1, a->betas()->beta1);
  a->step();
  b->step();
  EXPECT_EQ(b->lr(), a->lr());
}

TEST(OptimSchedulers, LoadStateRejectsOtherTypesAndBadIterations) {
  const auto s = optim::make_scheduler({{"type", "LRRangeTest"}}, 1.0);
  EXPECT_THROW(s->load_state({{"type", "WarmupLR"}, {"last_batch_iteration", 3}}), ValueError);
  EXPECT_THROW(s->load_state({{"type", "LRRangeTest"}, {"last_batch_iteration", -2}}), ValueError);
  EXPECT_THROW(s->load_state({{"type", "LRRangeTest"}, {"last_batch_iteration", 1.5}}), ValueError);
  EXPECT_THROW(s->load_state({{"type", "LRRangeTest"}}), ValueError);
  EXPECT_THROW(s->load_state(nlohmann::json::array()), ValueError);
  EXPECT_EQ(s->last_batch_iteration(), -1);
}

TEST(OptimSchedulers, BadConfigsNameTheProblem) {
  auto message = [](const nlohmann::json& config) -> std::string {
    try {
      optim::make_scheduler(config, 1.0);
    } catch (const ValueError& e) {
      return e.what();
    }
    return "(no error)";
  };
  EXPECT_NE(message({{"type", "Cyclic"}}).find("unknown scheduler type \"Cyclic\""),
            std::string::npos);
  EXPECT_NE(message({{"type", "WarmupLR"}, {"params", {{"warmup_max", 1}}}}).find("warmup_max"),
            std::string::npos);
  EXPECT_NE(message({{"type", "WarmupLR"}, {"params", {{"warmup_num_steps", -1}}}})
                .find("scheduler.params.warmup_num_steps"),
            std::string::npos);
  // 0 is DeepSpeed's too (a Trainer's default warmup): it warms up over 2 steps.
  EXPECT_EQ(message({{"type", "WarmupLR"}, {"params", {{"warmup_num_steps", 0}}}}), "(no error)");
  EXPECT_NE(message({{"type", "WarmupLR"}, {"params", {{"warmup_type", "exp"}}}}).find("exp"),
            std::string::npos);
  EXPECT_NE(message({{"type", "WarmupDecayLR"}}).find("total_num_steps"), std::string::npos);
  EXPECT_NE(message({{"type", "OneCycle"},
                     {"params",
                      {{"cycle_min_lr", 0}, {"cycle_max_lr", 1}, {"cycle_first_step_size", "10"}}}})
                .find("cycle_first_step_size"),
            std::string::npos);
  EXPECT_NE(message({{"type", "LRRangeTest"}, {"params", {{"lr_range_test_step_size", 0}}}})
                .find("lr_range_test_step_size"),
            std::string::npos);
  EXPECT_NE(message({{"type", "linear"}, {"extra", 1}}).find("extra"), std::string::npos);
}

// The scheduler is parsed once: a ds_config's typed section and a JSON block (read by the same
// parser) give the same schedule; a part-way start is refused.
TEST(OptimSchedulers, TypedSectionBuildsTheSameScheduleAsItsBlock) {
  const nlohmann::json block = {
      {"type", "OneCycle"},
      {"params", {{"cycle_min_lr", 1e-4}, {"cycle_max_lr", 1e-3}, {"cycle_first_step_size", 5}}}};
  const config::SchedulerConfig typed = config::parse_scheduler_block(block);
  const auto a = optim::make_scheduler(typed, 1.0);
  const auto b = optim::make_scheduler(block, 1.0);
  for (int64_t it = -1; it < 30; ++it) {
    EXPECT_EQ(a->lr_at(it), b->lr_at(it)) << it;
    EXPECT_EQ(a->betas_at(it)->beta1, b->betas_at(it)->beta1) << it;
  }
  config::WarmupCosineLrParams cosine;
  cosine.total_num_steps = 10;
  cosine.last_batch_iteration = 3;
  EXPECT_THROW(optim::make_scheduler(config::SchedulerConfig{cosine}, 1.0), ValueError);
}

TEST(OptimSchedulers, DefaultsAreDeepSpeeds) {
  const optim::WarmupLR w{config::WarmupLrParams{}};
  EXPECT_DOUBLE_EQ(w.lr_at(99), 0.001 * std::log(100.0) / std::log(1000.0));
  EXPECT_EQ(w.lr_at(1000), 0.001);
  const config::OneCycleParams p;
  EXPECT_EQ(p.cycle_first_step_size, 2000);
  EXPECT_EQ(p.cycle_min_mom, 0.8);
  EXPECT_EQ(p.cycle_max_mom, 0.9);
  const optim::LambParams lamb;
  EXPECT_EQ(lamb.max_coeff, 10.0f);
  EXPECT_EQ(lamb.min_coeff, 0.01f);
}

}  // namespace
}  // namespace zt
