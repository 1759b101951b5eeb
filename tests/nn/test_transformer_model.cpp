// The whole Transformer on the CPU: forward logits and loss of every family against the float64
// reference model (reference_model.h), bitwise determinism (runs and thread counts), bf16 against
// f32, loss scaling, gradient accumulation and zeroing, ignored targets, HF-style init, and errors.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <string>
#include <vector>

#include "nn/nn_test_util.h"
#include "nn/reference_model.h"
#include "support/test_util.h"
#include "zerotrain/core/error.h"
#include "zerotrain/kernels/cast.h"
#include "zerotrain/nn/block_runner.h"
#include "zerotrain/nn/head_block.h"
#include "zerotrain/nn/transformer.h"

namespace zt {
namespace {

using nn::Family;
using nn::ModelConfig;

test::RefParams ref_params(nn::Transformer& m) {
  test::RefParams p;
  for (auto* q : m.parameters()) {
    const auto v = test::to_doubles(q->value);
    p[q->name] = v;
  }
  return p;
}

// Hidden states through every block but the head, then the head's logits.
Tensor model_logits(nn::Transformer& m, const nn::StepContext& ctx) {
  auto& blocks = m.blocks();
  Tensor x;
  for (size_t i = 0; i + 1 < blocks.size(); ++i) {
    x = blocks[i]->forward(x, ctx);
    blocks[i]->release_saved();
  }
  return dynamic_cast<nn::HeadBlock&>(*blocks.back()).logits(x, ctx);
}

std::vector<ModelConfig> reference_cases() {
  std::vector<ModelConfig> out;
  for (Family f : test::all_families())
    out.push_back(test::tiny_config(f));
  ModelConfig l = test::tiny_config(Family::llama);
  l.attention_bias = l.mlp_bias = true;
  l.rope_scaling = {};
  out.push_back(l);
  ModelConfig q = test::tiny_config(Family::qwen2);
  q.sliding_window = 4;
  q.tie_word_embeddings = true;
  out.push_back(q);
  ModelConfig g = test::tiny_config(Family::gpt2);
  g.tie_word_embeddings = false;
  out.push_back(g);
  return out;
}

TEST(NnTransformer, ForwardMatchesFloat64Reference) {
  for (const ModelConfig& c : reference_cases()) {
    const std::string what = nn::family_name(c.family) + (c.tie_word_embeddings ? " tied" : "") +
                             (c.attention_bias ? " biased" : "");
    nn::Transformer m(c, {});
    test::randomize(m.parameters(), 3);
    const int64_t B = 2, S = 7;
    const nn::StepContext ctx = test::make_step(c, B, S, 5);
    const auto ref = test::reference_forward(c, ref_params(m), ctx.tokens.to_ints(),
                                             ctx.targets.to_ints(), B, S);
    const Tensor logits = model_logits(m, ctx);
    EXPECT_EQ(logits.shape(), (Shape{B, S, c.vocab_size})) << what;
    test::expect_close(ref.logits, logits, {2e-5, 2e-5}, what + " logits");
    EXPECT_NEAR(test::model_loss(m, ctx), ref.loss, 1e-5) << what;
  }
}

TEST(NnTransformer, SlidingWindowAndRopeScalingChangeTheResult) {
  // The reference agrees with the model above; here each feature must matter for these sizes.
  for (int feature = 0; feature < 2; ++feature) {
    ModelConfig c = test::tiny_config(feature == 0 ? Family::mistral : Family::llama);
    nn::Transformer m(c, {});
    test::randomize(m.parameters(), 3);
    const nn::StepContext ctx = test::make_step(c, 2, 7, 5);
    const double with = test::model_loss(m, ctx);
    if (feature == 0)
      c.sliding_window = 0;
    else
      c.rope_scaling = {};
    nn::Transformer plain(c, {});
    test::set_values(plain.parameters(), test::values_of(m.parameters()));
    EXPECT_GT(std::fabs(test::model_loss(plain, ctx) - with), 1e-4) << "feature " << feature;
  }
}

TEST(NnTransformer, BitwiseDeterministicAcrossRunsAndThreads) {
  for (Family f : test::all_families()) {
    const ModelConfig c = test::tiny_config(f);
    nn::Transformer m(c, {});
    test::randomize(m.parameters(), 9);
    const nn::StepContext ctx = test::make_step(c, 2, 7, 13);
    const double loss1 = test::model_loss_and_grads(m, ctx);
    std::vector<Tensor> g1;
    for (auto* p : m.parameters())
      g1.push_back(p->grad.clone());
    const int threads = omp_get_max_threads();
    for (int t : {threads, 1, 3}) {
      omp_set_num_threads(t);
      const double loss2 = test::model_loss_and_grads(m, ctx);
      EXPECT_EQ(loss1, loss2) << nn::family_name(f) << " threads " << t;
      auto params = m.parameters();
      for (size_t i = 0; i < params.size(); ++i)
        test::expect_bitwise_equal(g1[i], params[i]->grad,
                                   nn::family_name(f) + " " + params[i]->name);
    }
    omp_set_num_threads(threads);
  }
}

TEST(NnTransformer, Bf16CloseToF32) {
  for (Family f : test::all_families()) {
    const ModelConfig c = test::tiny_config(f);
    for (DType grad_dtype : {DType::f32, DType::bf16}) {
      nn::Transformer low(c, {.param_dtype = DType::bf16, .grad_dtype = grad_dtype});
      test::randomize(low.parameters(), 21);
      nn::Transformer ref(c, {});
      test::set_values(ref.parameters(), test::values_of(low.parameters()));  // the same values
      const double l32 = test::model_loss_and_grads(ref, test::make_step(c, 2, 7, 4));
      const double l16 = test::model_loss_and_grads(low, test::make_step(c, 2, 7, 4, DType::bf16));
      const std::string what = nn::family_name(f) + " grads " + std::string(dtype_name(grad_dtype));
      EXPECT_NEAR(l16, l32, 2e-2 * std::fabs(l32)) << what;
      EXPECT_LT(
          test::relative_l2(test::grads_of(low.parameters()), test::grads_of(ref.parameters())),
          5e-2)
          << what;
    }
  }
}

TEST(NnTransformer, LossScaleScalesGradientsExactly) {
  const ModelConfig c = test::tiny_config(Family::qwen2);
  nn::Transformer m(c, {});
  test::randomize(m.parameters(), 2);
  nn::StepContext ctx = test::make_step(c, 2, 7, 8);
  const double loss1 = test::model_loss_and_grads(m, ctx);
  const auto g1 = test::grads_of(m.parameters());
  // The loss scale enters the fused loss in forward ...
  ctx.loss_scale = 4.0f;
  EXPECT_EQ(test::model_loss_and_grads(m, ctx), loss1);  // the loss itself is not scaled
  auto g4 = test::grads_of(m.parameters());
  // ... or, when backward sees another scale than forward, rescales the head's GEMMs.
  m.zero_grads();
  nn::StepContext fwd = ctx;
  fwd.loss_scale = 1.0f;
  nn::BlockRunner runner(m.blocks());
  runner.forward(fwd);
  runner.backward(ctx);
  auto g4b = test::grads_of(m.parameters());
  for (size_t i = 0; i < g1.size(); ++i)
    for (size_t j = 0; j < g1[i].size(); ++j) {
      ASSERT_EQ(g4[i][j], 4.0 * g1[i][j]) << i << " " << j;
      ASSERT_EQ(g4b[i][j], 4.0 * g1[i][j]) << i << " " << j;
    }
}

TEST(NnTransformer, GradientsAccumulateUntilZeroed) {
  const ModelConfig c = test::tiny_config(Family::gpt2);
  nn::Transformer m(c, {});
  test::randomize(m.parameters(), 4);
  const nn::StepContext ctx = test::make_step(c, 2, 7, 6);
  test::model_loss_and_grads(m, ctx);
  const auto g1 = test::grads_of(m.parameters());
  nn::BlockRunner(m.blocks()).forward_backward(ctx);  // no zeroing: adds
  auto params = m.parameters();
  for (size_t i = 0; i < g1.size(); ++i) {
    std::vector<double> twice = g1[i];
    for (double& v : twice)
      v *= 2;
    // Exactly twice, except the tied table: (a + b) + a + b rounds differently from 2 (a + b).
    test::expect_close(twice, params[i]->grad, {1e-9, 1e-6}, params[i]->name);
  }
  m.zero_grads();
  for (const auto& g : test::grads_of(m.parameters()))
    for (double v : g)
      ASSERT_EQ(v, 0.0);
}

TEST(NnTransformer, AllTargetsIgnoredGivesZeroLossAndGradients) {
  const ModelConfig c = test::tiny_config(Family::llama);
  nn::Transformer m(c, {});
  test::randomize(m.parameters(), 4);
  nn::StepContext ctx = test::make_step(c, 2, 3, 6);
  ctx.targets.fill(-100);
  EXPECT_EQ(test::model_loss_and_grads(m, ctx), 0.0);
  for (const auto& g : test::grads_of(m.parameters()))
    for (double v : g)
      ASSERT_EQ(v, 0.0);
}

TEST(NnTransformer, FrozenParametersAreSkipped) {
  const ModelConfig c = test::tiny_config(Family::qwen2);
  nn::Transformer m(c, {});
  test::randomize(m.parameters(), 4);
  const nn::StepContext ctx = test::make_step(c, 2, 5, 6);
  test::model_loss_and_grads(m, ctx);
  const auto full = test::grads_of(m.parameters());
  for (auto* p : m.parameters())
    if (p->kind != nn::ParamKind::weight) p->grad = Tensor();  // freeze norms, biases, embedding
  test::model_loss_and_grads(m, ctx);
  auto params = m.parameters();
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i]->grad.defined())
      test::expect_close(full[i], params[i]->grad, {0, 0}, params[i]->name);
}

TEST(NnTransformer, InitRandomIsHuggingFaceStyleAndDeterministic) {
  for (Family f : test::all_families()) {
    ModelConfig c = test::tiny_config(f);
    c.hidden_size = 64;
    c.head_dim = 16;
    c.intermediate_size = 256;
    nn::Transformer a(c, {}), b(c, {}), other(c, {}), low(c, {.param_dtype = DType::bf16});
    a.init_random(42, 0.02f);
    b.init_random(42, 0.02f);
    other.init_random(43, 0.02f);
    low.init_random(42, 0.02f);
    auto pa = a.parameters(), pb = b.parameters(), po = other.parameters(), pl = low.parameters();
    for (size_t i = 0; i < pa.size(); ++i) {
      const std::string& name = pa[i]->name;
      test::expect_bitwise_equal(pa[i]->value, pb[i]->value, name);
      test::expect_bitwise_equal(kernels::cast_to(pa[i]->value, DType::bf16), pl[i]->value,
                                 name + " bf16");
      const auto v = test::to_doubles(pa[i]->value);
      switch (pa[i]->kind) {
        case nn::ParamKind::norm:
          for (double x : v)
            ASSERT_EQ(x, 1.0) << name;
          break;
        case nn::ParamKind::bias:
          for (double x : v)
            ASSERT_EQ(x, 0.0) << name;
          break;
        default: {
          double s2 = 0, mean = 0;
          for (double x : v)
            mean += x;
          mean /= static_cast<double>(v.size());
          for (double x : v)
            s2 += (x - mean) * (x - mean);
          const double sd = std::sqrt(s2 / static_cast<double>(v.size()));
          const bool scaled = f == Family::gpt2 && name.ends_with("c_proj.weight");
          const double want = scaled ? 0.02 / std::sqrt(2.0 * c.num_layers) : 0.02;
          EXPECT_NEAR(sd, want, 0.15 * want) << name;
          EXPECT_NEAR(mean, 0.0, 0.15 * want) << name;
          EXPECT_NE(test::to_doubles(po[i]->value), v) << name << " differs by seed";
        }
      }
    }
  }
}

template <typename E, typename Fn>
void expect_error(Fn&& fn, const std::string& part) {
  try {
    fn();
    ADD_FAILURE() << "expected an exception containing " << part;
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

TEST(NnTransformer, ErrorsNameTheProblem) {
  const ModelConfig c = test::tiny_config(Family::gpt2);
  nn::Transformer m(c, {});
  test::randomize(m.parameters(), 1);
  nn::BlockRunner runner(m.blocks());
  {
    nn::StepContext ctx = test::make_step(c, 2, 5, 1);
    ctx.compute_dtype = DType::bf16;
    expect_error<DTypeError>([&] { runner.forward(ctx); }, "transformer.wte");
  }
  {
    nn::StepContext ctx = test::make_step(c, 1, 17, 1);  // 16 positions
    expect_error<ShapeError>([&] { runner.forward(ctx); }, "max_position_embeddings");
  }
  {
    nn::StepContext ctx = test::make_step(c, 2, 5, 1);
    ctx.tokens = Tensor::from_ints({1, 2, 50, 3, 4, 5, 6, 7, 8, 9}, {2, 5}, DType::i32);
    expect_error<ValueError>([&] { runner.forward(ctx); }, "50");
  }
  {
    nn::StepContext ctx = test::make_step(c, 2, 5, 1);
    ctx.targets = test::make_step(c, 2, 4, 1).targets;
    expect_error<ShapeError>([&] { runner.forward(ctx); }, "ctx.targets");
  }
  {
    nn::Transformer fresh(c, {});
    nn::BlockRunner fresh_runner(fresh.blocks());
    const nn::StepContext ctx = test::make_step(c, 2, 5, 1);
    for (auto& block : fresh.blocks())
      expect_error<ValueError>(
          [&] {
            block->backward(Tensor::zeros({2, 5, 32}, DType::f32), ctx);
          },
          "without a saved forward");
    expect_error<ValueError>([&] { fresh_runner.backward(ctx); }, "backward without a forward");
  }
  {
    nn::Transformer bare(c, {.allocate = false});
    expect_error<ValueError>([&] { bare.init_random(1); }, "transformer.wte.weight");
  }
}

}  // namespace
}  // namespace zt
