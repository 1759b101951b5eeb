// Adam, AdamW, SGD (torch.optim, torch 1.13) and Lion, LAMB (the generator's own float32
// implementations of the paper / DeepSpeed formulas) over 50 steps, recorded by
// tools/reference/make_optimizer_reference.py in tests/data/optim/optimizer_reference.json.
// Every CPU path this machine supports must stay within 1e-6 relative of the recorded params.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "optim/optim_test_util.h"
#include "support/test_util.h"
#include "zerotrain/optim/optimizers.h"

namespace zt {
namespace {

using optim::CpuIsa;

nlohmann::json load_reference() {
  const auto path = test::test_data_dir() / "optim" / "optimizer_reference.json";
  std::ifstream file(path);
  if (!file) throw std::runtime_error("cannot open " + path.string());
  return nlohmann::json::parse(file);
}

// |got - ref| <= 1e-6 max(|ref|, 0.1 max|ref|): relative, with a floor for the elements near zero
// at a tenth of the tensor's largest magnitude. The floor is needed because torch rounds
// x + alpha * y once (ATen's vectorized add uses FMA) where zerotrain rounds twice: SGD's momentum
// buffer sums gradients of both signs, and an element that cancels down to 1e-2 keeps the ulp-level
// differences of its O(1) terms.
void expect_close_rel(const std::vector<float>& got, const nlohmann::json& ref,
                      const std::string& what) {
  const auto want = ref.get<std::vector<double>>();
  ASSERT_EQ(got.size(), want.size()) << what;
  double largest = 0;
  for (double w : want)
    largest = std::max(largest, std::abs(w));
  double worst = 0;
  size_t at = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double err = std::abs(got[i] - want[i]) / std::max(std::abs(want[i]), 0.1 * largest);
    if (err > worst) worst = err, at = i;
  }
  EXPECT_LE(worst, 1e-6) << what << ": element " << at << " got " << got[at] << " want "
                         << want[at];
}

float hyper(const nlohmann::json& c, const char* key) {
  return c.at("hyper").at(key).get<float>();
}

// Replays one case on `isa`.
void replay(const nlohmann::json& c, const std::vector<int64_t>& sizes, int steps, CpuIsa isa) {
  const std::string kind = c.at("optimizer");
  const auto index = c.at("case_index").get<uint64_t>();
  const float wd = c.at("weight_decay").get<float>();
  const float grad_scale = c.at("grad_scale").get<float>();
  std::vector<test::RunBuffers> runs;
  for (size_t t = 0; t < sizes.size(); ++t)
    runs.emplace_back(test::stream_values(index, 0, t, static_cast<size_t>(sizes[t])), DType::f32,
                      false, DType::bf16);
  auto decay = [&](size_t t) { return t == 1 ? 0.0f : wd; };  // tensor 1: the no-decay group
  for (int step = 1; step <= steps; ++step) {
    for (size_t t = 0; t < runs.size(); ++t)
      runs[t].set_grad(
          test::stream_values(index, static_cast<uint64_t>(step), t, runs[t].master.size()));
    optim::StepArgs args{step, grad_scale, isa};
    if (kind == "adam" || kind == "adamw") {
      optim::AdamParams hp;
      hp.lr = hyper(c, "lr");
      hp.beta1 = hyper(c, "beta1");
      hp.beta2 = hyper(c, "beta2");
      hp.eps = hyper(c, "eps");
      hp.decoupled = kind == "adamw";
      std::vector<optim::AdamShard> shards;
      for (size_t t = 0; t < runs.size(); ++t)
        shards.push_back(runs[t].adam(decay(t)));
      optim::adam_step(shards, hp, args);
    } else if (kind == "sgd") {
      optim::SgdParams hp;
      hp.lr = hyper(c, "lr");
      hp.momentum = hyper(c, "momentum");
      hp.dampening = hyper(c, "dampening");
      hp.nesterov = c.at("hyper").at("nesterov").get<bool>();
      std::vector<optim::SgdShard> shards;
      for (size_t t = 0; t < runs.size(); ++t)
        shards.push_back(runs[t].sgd(decay(t), hp.momentum != 0.0f));
      optim::sgd_step(shards, hp, args);
    } else if (kind == "lion") {
      optim::LionParams hp;
      hp.lr = hyper(c, "lr");
      hp.beta1 = hyper(c, "beta1");
      hp.beta2 = hyper(c, "beta2");
      std::vector<optim::LionShard> shards;
      for (size_t t = 0; t < runs.size(); ++t)
        shards.push_back(runs[t].lion(decay(t)));
      optim::lion_step(shards, hp, args);
    } else {
      ASSERT_EQ(kind, "lamb");
      optim::LambParams hp;
      hp.lr = hyper(c, "lr");
      hp.beta1 = hyper(c, "beta1");
      hp.beta2 = hyper(c, "beta2");
      hp.eps = hyper(c, "eps");
      hp.eps_inside_sqrt = c.at("hyper").at("eps_inside_sqrt").get<bool>();
      hp.max_coeff = hyper(c, "max_coeff");
      hp.min_coeff = hyper(c, "min_coeff");
      std::vector<optim::LambShard> shards;
      for (size_t t = 0; t < runs.size(); ++t)
        shards.push_back(runs[t].adam(decay(t)));
      optim::lamb_step(shards, hp, args);
    }
    const std::string key = std::to_string(step);
    if (c.at("params").contains(key))
      for (size_t t = 0; t < runs.size(); ++t)
        expect_close_rel(runs[t].master, c.at("params").at(key).at(t),
                         "step " + key + " tensor " + std::to_string(t));
  }
  const auto& state = c.at("final_state");
  for (size_t t = 0; t < runs.size(); ++t) {
    if (state.contains("exp_avg"))
      expect_close_rel(runs[t].s0, state.at("exp_avg").at(t), "exp_avg " + std::to_string(t));
    if (state.contains("momentum_buffer"))
      expect_close_rel(runs[t].s0, state.at("momentum_buffer").at(t),
                       "momentum_buffer " + std::to_string(t));
    if (state.contains("exp_avg_sq"))
      expect_close_rel(runs[t].s1, state.at("exp_avg_sq").at(t), "exp_avg_sq " + std::to_string(t));
  }
}

TEST(OptimTorch, EveryCaseOnEveryCpuPath) {
  const nlohmann::json doc = load_reference();
  const auto sizes = doc.at("sizes").get<std::vector<int64_t>>();
  const int steps = doc.at("steps").get<int>();
  ASSERT_GE(doc.at("cases").size(), 10u);
  for (CpuIsa isa : test::supported_isas())
    for (const auto& c : doc.at("cases")) {
      SCOPED_TRACE(std::string(optim::cpu_isa_name(isa)) + " " + c.at("name").get<std::string>());
      replay(c, sizes, steps, isa);
    }
}

TEST(OptimTorch, ReferenceCoversEveryOptimizer) {
  const nlohmann::json doc = load_reference();
  for (const char* kind : {"adam", "adamw", "sgd", "lion", "lamb"}) {
    const bool found = std::any_of(doc.at("cases").begin(), doc.at("cases").end(),
                                   [&](const auto& c) { return c.at("optimizer") == kind; });
    EXPECT_TRUE(found) << kind;
  }
}

}  // namespace
}  // namespace zt
