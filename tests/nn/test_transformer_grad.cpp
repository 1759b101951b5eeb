// Whole-model gradients of every family's tiny config (GQA, Llama-3 rope scaling, mistral's sliding
// window, qwen2's q/k/v biases, gpt2's tied embeddings and Conv1D layout, llama with every bias)
// against central finite differences of the f32 loss: along random directions over ALL parameters
// at once, and along a random direction within each parameter on its own.
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "nn/nn_test_util.h"
#include "support/test_util.h"
#include "zerotrain/nn/transformer.h"

namespace zt {
namespace {

using nn::Family;
using nn::ModelConfig;

struct Case {
  std::string name;
  ModelConfig config;
};

std::vector<Case> cases() {
  std::vector<Case> out;
  for (Family f : test::all_families())
    out.push_back({nn::family_name(f), test::tiny_config(f)});
  ModelConfig biased = test::tiny_config(Family::llama);
  biased.attention_bias = biased.mlp_bias = true;
  biased.tie_word_embeddings = true;
  out.push_back({"llama_biases_tied", biased});
  ModelConfig untied = test::tiny_config(Family::gpt2);
  untied.tie_word_embeddings = false;
  out.push_back({"gpt2_untied", untied});
  return out;
}

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name;
}

class NnTransformerGrad : public ::testing::TestWithParam<Case> {};

TEST_P(NnTransformerGrad, MatchesFiniteDifferences) {
  const ModelConfig& c = GetParam().config;
  nn::Transformer m(c, {});
  auto params = m.parameters();
  test::randomize(params, 7);
  const nn::StepContext ctx = test::make_step(c, 2, 7, 11);

  test::model_loss_and_grads(m, ctx);
  const auto grads = test::grads_of(params);
  const auto x0 = test::values_of(params);
  auto loss = [&](const std::vector<std::vector<float>>& v) {
    test::set_values(params, v);
    return test::model_loss(m, ctx);
  };
  test::expect_gradients_match_fd(loss, x0, grads, GetParam().name + " all parameters", 1e-2, 1e-2,
                                  4, 99);

  // One parameter at a time: a wrong gradient of a small parameter cannot hide in the sum.
  for (size_t i = 0; i < params.size(); ++i) {
    auto one = [&](const std::vector<std::vector<float>>& v) {
      auto all = x0;
      all[i] = v[0];
      return loss(all);
    };
    test::expect_gradients_match_fd(
        one, {x0[i]}, {grads[i]}, GetParam().name + " " + params[i]->name, 1e-2, 1e-2, 1, 1000 + i);
  }
  test::set_values(params, x0);
}

INSTANTIATE_TEST_SUITE_P(NnFamilies, NnTransformerGrad, ::testing::ValuesIn(cases()),
                         [](const auto& p) { return p.param.name; });

}  // namespace
}  // namespace zt
