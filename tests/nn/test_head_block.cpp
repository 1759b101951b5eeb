// HeadBlock: final norm + projection + mean cross-entropy over targets != -100, against a float64
// evaluation; its gradients (input, norm, projection) against finite differences, untied and tied.
#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <cmath>
#include <vector>

#include "nn/nn_test_util.h"
#include "support/test_util.h"
#include "zerotrain/nn/head_block.h"
#include "zerotrain/nn/loss_targets.h"

namespace zt {
namespace {

TEST(NnHead, LossMatchesFloat64) {
  const nn::ModelConfig c = test::tiny_config(nn::Family::llama);
  nn::HeadBlock head(c, nullptr);
  auto params = head.parameters();
  ASSERT_EQ(params.size(), 2u);
  EXPECT_EQ(params[0]->name, "model.norm.weight");
  EXPECT_EQ(params[1]->name, "lm_head.weight");
  test::allocate(params, DType::f32, DType::f32);
  test::randomize(params, 2);
  const int64_t B = 2, S = 5, C = c.hidden_size, V = c.vocab_size;
  const nn::StepContext ctx = test::make_step(c, B, S, 3);
  const Tensor x = test::random_tensor({B, S, C}, DType::f32, 4, -2.0f, 2.0f);
  const Tensor loss = head.forward(x, ctx);
  EXPECT_EQ(loss.shape(), (Shape{1}));
  EXPECT_EQ(loss.dtype(), DType::f32);

  const auto xv = test::to_doubles(x), w = test::to_doubles(params[0]->value),
             lm = test::to_doubles(params[1]->value);
  const auto tgt = ctx.targets.to_ints();
  double total = 0;
  int valid = 0;
  std::vector<double> all_logits;
  for (int64_t t = 0; t < B * S; ++t) {
    double ms = 0;
    for (int64_t i = 0; i < C; ++i)
      ms += xv[t * C + i] * xv[t * C + i];
    const double rstd = 1 / std::sqrt(ms / C + c.norm_eps);
    std::vector<double> logits(V, 0.0);
    for (int64_t v = 0; v < V; ++v)
      for (int64_t i = 0; i < C; ++i)
        logits[v] += xv[t * C + i] * rstd * w[i] * lm[v * C + i];
    all_logits.insert(all_logits.end(), logits.begin(), logits.end());
    if (tgt[t] == -100) continue;
    const double mx = *std::max_element(logits.begin(), logits.end());
    double z = 0;
    for (double l : logits)
      z += std::exp(l - mx);
    total += std::log(z) + mx - logits[tgt[t]];
    ++valid;
  }
  EXPECT_NEAR(loss.to_floats()[0], total / valid, 1e-5);
  test::expect_close(all_logits, head.logits(x, ctx), {1e-5, 1e-5}, "logits");
  head.release_saved();
}

TEST(NnHead, GradientsMatchFiniteDifferences) {
  for (bool tied : {false, true}) {
    const nn::ModelConfig c = test::tiny_config(tied ? nn::Family::gpt2 : nn::Family::qwen2);
    nn::Parameter table;
    table.name = "transformer.wte.weight";
    table.shape = {c.vocab_size, c.hidden_size};
    table.kind = nn::ParamKind::embedding;
    nn::HeadBlock head(c, tied ? &table : nullptr);
    auto params = head.parameters();
    if (tied) {
      EXPECT_EQ(head.shared_parameters(), std::vector<nn::Parameter*>{&table});
      params.push_back(&table);
    }
    test::allocate(params, DType::f32, DType::f32);
    test::randomize(params, 2, 0.5f);
    const nn::StepContext ctx = test::make_step(c, 2, 4, 3);
    // The head's output is the loss itself: a cotangent of 1 is its loss_scale.
    test::LayerProbe probe{[&](const Tensor& x) { return head.forward(x, ctx); },
                           [&](const Tensor& dy) {
                             nn::StepContext b = ctx;
                             b.loss_scale = dy.to_floats()[0];
                             return head.backward({}, b);
                           },
                           params};
    test::expect_layer_gradients_match_fd(probe,
                                          test::random_tensor({2, 4, c.hidden_size}, DType::f32, 5),
                                          21, tied ? "tied head" : "head");
  }
}

// [Note: loss normalisation]: with a count in the context the head returns its summed losses over
// that count and its gradients scale alike; a batch whose targets are all masked gives 0 and no
// gradient, whatever the count.
TEST(NnHead, DividesByTheStepsCountOfTargets) {
  const nn::ModelConfig c = test::tiny_config(nn::Family::llama);
  nn::HeadBlock head(c, nullptr);
  auto params = head.parameters();
  test::allocate(params, DType::f32, DType::f32);
  test::randomize(params, 2);
  nn::StepContext ctx = test::make_step(c, 2, 5, 3);
  const Tensor x = test::random_tensor({2, 5, c.hidden_size}, DType::f32, 4, -2.0f, 2.0f);
  const int64_t own = nn::count_loss_targets(ctx.targets);
  ASSERT_GT(own, 0);
  auto run = [&](const nn::StepContext& step) {
    for (nn::Parameter* p : params)
      p->grad.fill(0.0);
    const double loss = head.forward(x, step).to_floats()[0];
    const std::vector<float> dx = head.backward({}, step).to_floats();
    return std::make_pair(loss, dx);
  };
  const auto [mean, dmean] = run(ctx);
  nn::StepContext shared = ctx;
  shared.num_items_in_batch = 3 * own;  // the step counts more targets than this micro-batch's
  const auto [share, dshare] = run(shared);
  EXPECT_NEAR(share, mean / 3, 1e-6 * mean);
  for (size_t i = 0; i < dmean.size(); ++i)
    ASSERT_NEAR(dshare[i], dmean[i] / 3, 1e-6 + 1e-5 * std::abs(dmean[i])) << i;

  nn::StepContext masked = shared;
  masked.targets = Tensor::from_ints(std::vector<int64_t>(10, nn::kIgnoreIndex), {2, 5}, DType::i64);
  EXPECT_EQ(nn::count_loss_targets(masked.targets), 0);
  for (int64_t items : {int64_t{-1}, 3 * own}) {
    masked.num_items_in_batch = items;
    const auto [zero, dzero] = run(masked);
    EXPECT_EQ(zero, 0.0) << items;
    for (float g : dzero)
      ASSERT_EQ(g, 0.0f) << items;
    for (nn::Parameter* p : params)
      for (float g : p->grad.to_floats())
        ASSERT_EQ(g, 0.0f) << p->name << " " << items;
  }
}

}  // namespace
}  // namespace zt
