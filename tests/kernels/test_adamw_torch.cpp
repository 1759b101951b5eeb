// CPU AdamW replaying torch.optim.AdamW trajectories (PyTorch on the CPU, float32) recorded by
// tools/gen_adamw_reference.py in tests/data/adamw_torch_reference.json: same start, same
// gradients, 20 steps; every step's params and the final moments must match torch's within a few
// ulps (torch's lerp and addcmul round differently from the header's formulas).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/test_util.h"
#include "zerotrain/kernels/adamw.h"

namespace zt {
namespace {

std::filesystem::path reference_path() {
  return test::test_data_dir() / "adamw_torch_reference.json";
}

// A hyper-parameter recorded as a double that must be exactly representable in f32, so that
// torch and AdamWParams start from the same value.
float exact_f32(const nlohmann::json& v) {
  const double d = v.get<double>();
  EXPECT_EQ(static_cast<double>(static_cast<float>(d)), d) << d << " is not an f32 value";
  return static_cast<float>(d);
}

std::vector<double> doubles(const nlohmann::json& v) {
  return v.get<std::vector<double>>();
}

std::vector<float> floats(const nlohmann::json& v) {
  return v.get<std::vector<float>>();
}

TEST(AdamWTorch, CpuReplaysTorchTrajectories) {
  std::ifstream file(reference_path());
  ASSERT_TRUE(file) << "cannot open " << reference_path();
  const nlohmann::json doc = nlohmann::json::parse(file);
  ASSERT_GE(doc.at("cases").size(), 1u);
  for (const auto& c : doc.at("cases")) {
    SCOPED_TRACE(c.at("name").get<std::string>());
    kernels::AdamWParams hp;
    hp.lr = exact_f32(c.at("lr"));
    hp.beta1 = exact_f32(c.at("beta1"));
    hp.beta2 = exact_f32(c.at("beta2"));
    hp.eps = exact_f32(c.at("eps"));
    hp.weight_decay = exact_f32(c.at("weight_decay"));
    const std::vector<float> start = floats(c.at("param0"));
    const int64_t n = static_cast<int64_t>(start.size());
    Tensor param = Tensor::from_floats(start, {n}, DType::f32);
    Tensor m = Tensor::zeros({n}, DType::f32), v = Tensor::zeros({n}, DType::f32);
    const auto& grads = c.at("grads");
    const auto& params = c.at("params");
    ASSERT_EQ(grads.size(), params.size());
    for (size_t k = 0; k < grads.size(); ++k) {
      SCOPED_TRACE("step " + std::to_string(k + 1));
      hp.step = static_cast<int64_t>(k + 1);
      Tensor grad = Tensor::from_floats(floats(grads[k]), {n}, DType::f32);
      kernels::adamw_step(param, grad, m, v, hp);
      const std::vector<double> want = doubles(params[k]);
      double p_max = 0;
      for (double x : want)
        p_max = std::max(p_max, std::fabs(x));
      test::expect_close(want, param, {2.4e-7 * p_max, 2.4e-7}, "param");  // ~4 ulps
      if (testing::Test::HasFailure()) return;
    }
    test::expect_close(doubles(c.at("exp_avg")), m, {1e-7, 2.4e-7}, "exp_avg");
    test::expect_close(doubles(c.at("exp_avg_sq")), v, {1e-12, 2.4e-7}, "exp_avg_sq");
  }
}

}  // namespace
}  // namespace zt
